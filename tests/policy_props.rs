//! Property tests of the background-execution refusal: whatever the text, the lexer
//! never panics, quoted text is never a command, and a trailing `&` always is.

use cargo_verify_matrix::manifest::Policy;
use cargo_verify_matrix::manifest::Shell;
use cargo_verify_matrix::run::policy::refusal;
use cargo_verify_matrix::shell::lexer::{lex, simple_commands};
use proptest::prelude::*;

/// Plain words that are no command name the policy knows.
fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.-]{0,8}".prop_filter("not a policy word", |w| {
        ![
            "nohup",
            "disown",
            "setsid",
            "exec",
            "command",
            "builtin",
            "env",
            "nice",
            "sudo",
            "time",
            "tail",
            "vite",
            "cargo",
            "npm",
            "yarn",
            "pnpm",
            "bun",
            "nodemon",
            "serve",
            "next",
            "nuxt",
            "ng",
            "hugo",
            "rails",
            "flask",
            "jekyll",
            "mkdocs",
            "astro",
            "remix",
            "nuxi",
            "live-server",
            "http-server",
            "browser-sync",
            "cargo-watch",
            "if",
            "then",
            "fi",
            "do",
            "done",
            "while",
            "for",
            "case",
            "esac",
            "until",
            "else",
            "elif",
        ]
        .contains(&w.as_str())
    })
}

fn simple_command() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..5).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_lexer_never_panics(input in "\\PC{0,80}") {
        let tokens = lex(&input);
        let _ = simple_commands(&tokens);
        let _ = refusal(&input, Shell::Bash, &Policy::default());
    }

    #[test]
    fn commands_joined_by_foreground_operators_pass(
        commands in prop::collection::vec(simple_command(), 1..4),
        ops in prop::collection::vec(prop::sample::select(vec![" && ", " || ", "; ", " | ", " |& ", "\n"]), 3),
        redirect in prop::sample::select(vec!["", " 2>&1", " >&2", " &> log", " > out 2> err"]),
    ) {
        let mut cmd = String::new();
        for (i, c) in commands.iter().enumerate() {
            if i > 0 {
                cmd.push_str(ops[i - 1]);
            }
            cmd.push_str(c);
        }
        cmd.push_str(redirect);
        prop_assert_eq!(refusal(&cmd, Shell::Bash, &Policy::default()), None, "{}", cmd);
    }

    #[test]
    fn a_standalone_ampersand_is_always_refused(
        before in simple_command(),
        after in prop::option::of(simple_command()),
        wrap in prop::bool::ANY,
    ) {
        let mut cmd = format!("{before} &");
        if let Some(after) = after {
            cmd = format!("{cmd} {after}");
        }
        if wrap {
            cmd = format!("({cmd})");
        }
        prop_assert!(refusal(&cmd, Shell::Bash, &Policy::default()).is_some(), "{}", cmd);
    }

    #[test]
    fn anything_inside_quotes_is_an_argument(text in "[^'\\x00]{0,40}") {
        let single = format!("echo '{text}'");
        prop_assert_eq!(refusal(&single, Shell::Bash, &Policy::default()), None, "{}", single);
        let escaped: String = text
            .chars()
            .flat_map(|c| match c {
                '\\' | '"' | '$' | '`' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        let double = format!("echo \"{escaped}\"");
        prop_assert_eq!(refusal(&double, Shell::Bash, &Policy::default()), None, "{}", double);
    }

    #[test]
    fn detaching_words_are_refused_anywhere_a_command_starts(
        before in prop::option::of(simple_command()),
        detacher in prop::sample::select(vec!["nohup", "setsid", "disown"]),
        rest in simple_command(),
    ) {
        let cmd = match before {
            Some(b) => format!("{b} && {detacher} {rest}"),
            None => format!("{detacher} {rest}"),
        };
        prop_assert!(refusal(&cmd, Shell::Bash, &Policy::default()).is_some(), "{}", cmd);
    }
}
