use super::*;

fn commands(input: &str) -> Vec<(Vec<String>, Option<&'static str>)> {
    simple_commands(&lex(input))
        .into_iter()
        .map(|c| (c.words, c.terminator))
        .collect()
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn quotes_keep_operators_inside_words() {
    assert_eq!(
        commands(r#"echo "a & b""#),
        [(words(&["echo", "a & b"]), None)]
    );
    assert_eq!(
        commands("grep -- '&' f"),
        [(words(&["grep", "--", "&", "f"]), None)]
    );
    assert_eq!(commands(r"echo a\&b"), [(words(&["echo", "a&b"]), None)]);
    assert_eq!(commands("echo $'a\\'&'"), [(words(&["echo", "a'&"]), None)]);
}

#[test]
fn operators_split_commands() {
    assert_eq!(
        commands("a && b || c; d | e |& f"),
        [
            (words(&["a"]), Some("&&")),
            (words(&["b"]), Some("||")),
            (words(&["c"]), Some(";")),
            (words(&["d"]), Some("|")),
            (words(&["e"]), Some("|&")),
            (words(&["f"]), None),
        ]
    );
    assert_eq!(commands("sleep 9 &"), [(words(&["sleep", "9"]), Some("&"))]);
}

#[test]
fn redirections_are_not_background() {
    for input in [
        "cmd 2>&1",
        "cmd >&2",
        "cmd &> log",
        "cmd &>> log",
        "cmd 2> err 1>out",
        "cmd <&0",
    ] {
        let cmds = commands(input);
        assert_eq!(cmds.len(), 1, "{input}: {cmds:?}");
        assert_eq!(cmds[0].0, words(&["cmd"]), "{input}");
        assert_eq!(cmds[0].1, None, "{input}");
    }
}

#[test]
fn substitutions_and_subshells_are_lexed_inside() {
    let cmds = commands("echo $(sleep 1 &) `date`");
    assert!(
        cmds.contains(&(words(&["sleep", "1"]), Some("&"))),
        "{cmds:?}"
    );
    assert!(cmds.contains(&(words(&["date"]), None)), "{cmds:?}");
    let cmds = commands("(x &)");
    assert!(cmds.contains(&(words(&["x"]), Some("&"))), "{cmds:?}");
    let cmds = commands("(x; y) &");
    assert!(cmds.iter().any(|c| c.1 == Some("&")), "{cmds:?}");
    assert_eq!(commands("echo $((1 & 2))"), [(words(&["echo", "0"]), None)]);
}

#[test]
fn comments_and_heredoc_bodies_are_not_commands() {
    assert_eq!(commands("true # sleep 9 &"), [(words(&["true"]), None)]);
    let cmds = commands("cat <<EOF\nsleep 9 &\nnohup x\nEOF\necho done");
    assert_eq!(
        cmds,
        [
            (words(&["cat"]), Some("\n")),
            (words(&["echo", "done"]), None)
        ]
    );
    let cmds = commands("cat <<-'END' > f\n\tx & y\n\tEND\n");
    assert_eq!(cmds, [(words(&["cat"]), Some("\n"))]);
}

#[test]
fn assignments_are_not_command_names() {
    assert_eq!(
        commands("A=1 B=x nohup y"),
        [(words(&["nohup", "y"]), None)]
    );
    assert_eq!(commands("echo A=1"), [(words(&["echo", "A=1"]), None)]);
}

#[test]
fn an_and_list_splits_into_its_commands_as_written() {
    let list = |s: &str| and_list(s).map(|v| v.join(" | "));
    assert_eq!(
        list("npm test && npm run build && npm run lint").as_deref(),
        Some("npm test | npm run build | npm run lint")
    );
    assert_eq!(
        list("echo 'a && b' && grep -q \"x&&y\" f\n").as_deref(),
        Some("echo 'a && b' | grep -q \"x&&y\" f")
    );
    assert_eq!(
        list("cargo test 2>&1 | tee log && test -s log").as_deref(),
        Some("cargo test 2>&1 | tee log | test -s log"),
        "a pipeline binds tighter than &&"
    );
    assert_eq!(
        list("(cd web && npm test) && echo $(a && b)").as_deref(),
        Some("(cd web && npm test) | echo $(a && b)")
    );
    for whole in [
        "npm test",
        "a && b || c",
        "a; b && c",
        "a && b &",
        "a &&",
        "&& a",
        "a && b\nc",
        "cat <<EOF && b\nx && y\nEOF\n",
    ] {
        assert_eq!(and_list(whole), None, "{whole:?}");
    }
}
