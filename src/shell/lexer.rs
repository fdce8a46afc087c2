//! A small POSIX/bash lexer: enough of the shell's grammar to find the simple commands
//! of a command line and the operators between them, so that policy can tell `sleep 9 &`
//! (background) from `echo "a & b"`, `a && b`, `cmd 2>&1` or `grep -- '&' f`.
//!
//! Written by hand because no maintained crate exposes bash's token boundaries: the
//! word-splitting crates (shell-words, shlex) reject or flatten operators. It covers
//! quotes (single, double, `$'…'`), backslash escapes, comments, command substitution
//! (`$(…)` and backticks, lexed recursively), subshells, redirections with file
//! descriptors (`2>&1`, `>&2`, `&>`, `&>>`, `|&`), and here-documents, whose bodies are
//! text, not commands.

/// A token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word, with quotes removed (escapes resolved).
    Word(String),
    /// A control operator: `&&`, `||`, `;`, `&`, `|`, `|&`, a newline, …
    Op(&'static str),
    /// A redirection operator; the next word is its target, not a command word. A
    /// leading file-descriptor number is folded in: `2>&1` gives `Redirect(">&")`
    /// followed by the word `1`.
    Redirect(&'static str),
    /// A command substitution or subshell body, lexed on its own.
    Nested(Vec<Token>),
}

/// Control operators, longest first.
const CONTROL: &[&str] = &[";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "\n"];
/// Redirection operators, longest first.
const REDIRECT: &[&str] = &[
    "&>>", "<<<", "<<-", "&>", ">&", "<&", ">>", ">|", "<<", "<>", ">", "<",
];

/// Lexes `input` into tokens. Unterminated quotes or substitutions end at the end of
/// the input rather than failing: policy errs on the side of reading more as commands.
pub fn lex(input: &str) -> Vec<Token> {
    let chars: Vec<char> = input.chars().collect();
    let mut lexer = Lexer::new(&chars);
    lexer.tokens(None)
}

/// The commands of an and-list (`a && b && c`), each as written (quotes kept), when
/// `&&` is the only list operator at the top level of `input` (pipelines bind tighter
/// and stay whole): `a || b && c`, `a; b`, `&&` only inside `$(…)` or a subshell, or a
/// single command give `None`.
pub fn and_list(input: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = input.chars().collect();
    let mut lexer = Lexer::new(&chars);
    lexer.tokens(None);
    // A trailing newline ends the list; anything else than `&&` is another shape.
    let mut ops = lexer.top_ops;
    ops.retain(|&(_, op)| !matches!(op, "|" | "|&"));
    while ops
        .last()
        .is_some_and(|&(at, op)| op == "\n" && chars[at..].iter().all(|c| c.is_whitespace()))
    {
        ops.pop();
    }
    if ops.is_empty() || ops.iter().any(|&(_, op)| op != "&&") {
        return None;
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for &(at, _) in ops.iter().chain(std::iter::once(&(chars.len(), ""))) {
        let part: String = chars[start..at.min(chars.len())].iter().collect();
        let part = part.trim();
        if part.is_empty() {
            return None;
        }
        parts.push(part.to_owned());
        start = at + 2;
    }
    Some(parts)
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    /// Here-document delimiters waiting for the end of the current line.
    heredocs: Vec<(String, bool)>,
    /// The characters that close the substitutions being lexed, innermost last.
    closers: Vec<char>,
    /// Where each control operator outside any substitution or subshell starts.
    top_ops: Vec<(usize, &'static str)>,
}

impl<'a> Lexer<'a> {
    fn new(chars: &'a [char]) -> Lexer<'a> {
        Lexer {
            chars,
            pos: 0,
            heredocs: Vec::new(),
            closers: Vec::new(),
            top_ops: Vec::new(),
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek(i) == Some(c))
    }

    /// Tokens until the end, or until `close` (`)` for `$(`/`(`, `` ` `` for backticks).
    fn tokens(&mut self, close: Option<char>) -> Vec<Token> {
        self.closers.extend(close);
        let out = self.tokens_until(close);
        if close.is_some() {
            self.closers.pop();
        }
        out
    }

    fn tokens_until(&mut self, close: Option<char>) -> Vec<Token> {
        let mut out = Vec::new();
        while let Some(c) = self.peek(0) {
            if Some(c) == close {
                self.pos += 1;
                return out;
            }
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.note_op("\n");
                    self.pos += 1;
                    out.push(Token::Op("\n"));
                    self.skip_heredoc_bodies();
                }
                '#' => self.skip_comment(),
                '(' => {
                    self.pos += 1;
                    out.push(Token::Nested(self.tokens(Some(')'))));
                }
                ')' => {
                    // A stray `)` (e.g. a `case` pattern): an operator, not a word.
                    self.note_op(")");
                    self.pos += 1;
                    out.push(Token::Op(")"));
                }
                _ => {
                    if let Some(op) = self.redirect() {
                        out.push(Token::Redirect(op));
                    } else if let Some(op) = self.control() {
                        out.push(Token::Op(op));
                    } else {
                        self.word(&mut out);
                    }
                }
            }
        }
        out
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                return;
            }
            self.pos += 1;
        }
    }

    fn note_op(&mut self, op: &'static str) {
        if self.closers.is_empty() {
            self.top_ops.push((self.pos, op));
        }
    }

    fn control(&mut self) -> Option<&'static str> {
        let op = CONTROL.iter().find(|op| self.starts_with(op))?;
        self.note_op(op);
        self.pos += op.chars().count();
        Some(op)
    }

    fn redirect(&mut self) -> Option<&'static str> {
        let op = REDIRECT.iter().find(|op| self.starts_with(op))?;
        self.pos += op.chars().count();
        if matches!(*op, "<<" | "<<-") {
            self.skip_blanks();
            let (delimiter, _) = self.raw_word();
            self.heredocs.push((delimiter, *op == "<<-"));
            // The delimiter is consumed here; the Redirect needs no target word.
            return Some(if *op == "<<" { "<<" } else { "<<-" });
        }
        Some(op)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    /// After a newline: the bodies of pending here-documents, up to their delimiters.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return;
                }
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0) == Some('\n') {
                    self.pos += 1;
                }
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }

    /// A here-document delimiter: the word with quotes removed.
    fn raw_word(&mut self) -> (String, bool) {
        let mut text = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\'' | '"' => {
                    quoted = true;
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        if q == c {
                            break;
                        }
                        text.push(q);
                    }
                }
                '\\' => {
                    quoted = true;
                    self.pos += 1;
                    if let Some(next) = self.peek(0) {
                        text.push(next);
                        self.pos += 1;
                    }
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        (text, quoted)
    }

    /// One word, which may hold quoted parts and substitutions. A word made only of
    /// digits directly followed by `<` or `>` is a file descriptor: it is dropped, the
    /// redirection that follows says what happens.
    fn word(&mut self, out: &mut Vec<Token>) {
        let mut text = String::new();
        let mut nested = Vec::new();
        while let Some(c) = self.peek(0) {
            if self.closers.last() == Some(&c) {
                break;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '|' | '(' | ')' => break,
                '&' => break,
                '<' | '>' => {
                    if !text.is_empty() && text.chars().all(|d| d.is_ascii_digit()) {
                        // `2>&1`: the number belongs to the redirection.
                        text.clear();
                    }
                    break;
                }
                '\'' => {
                    self.pos += 1;
                    self.single_quoted(&mut text);
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut text, &mut nested);
                }
                '\\' => {
                    self.pos += 1;
                    if let Some(next) = self.peek(0) {
                        if next != '\n' {
                            text.push(next);
                        }
                        self.pos += 1;
                    }
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    self.ansi_c_quoted(&mut text);
                }
                '$' if self.peek(1) == Some('(') && self.peek(2) == Some('(') => {
                    // Arithmetic `$(( … ))`: no commands inside.
                    self.pos += 3;
                    self.skip_arithmetic();
                    text.push('0');
                }
                '$' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    nested.push(Token::Nested(self.tokens(Some(')'))));
                    text.push('$');
                }
                '`' => {
                    self.pos += 1;
                    nested.push(Token::Nested(self.tokens(Some('`'))));
                    text.push('$');
                }
                c => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        if !text.is_empty() || !nested.is_empty() {
            out.push(Token::Word(text));
        }
        out.extend(nested);
    }

    /// The rest of `'…'`: every character literal.
    fn single_quoted(&mut self, text: &mut String) {
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            if q == '\'' {
                break;
            }
            text.push(q);
        }
    }

    /// The rest of `$'…'`: a backslash escapes the next character.
    fn ansi_c_quoted(&mut self, text: &mut String) {
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            match q {
                '\'' => break,
                '\\' => {
                    if let Some(e) = self.peek(0) {
                        text.push(e);
                        self.pos += 1;
                    }
                }
                q => text.push(q),
            }
        }
    }

    /// The rest of `$(( … ))`, up to its closing parentheses.
    fn skip_arithmetic(&mut self) {
        let mut depth = 2;
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            match q {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }

    fn double_quoted(&mut self, text: &mut String, nested: &mut Vec<Token>) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '"' => return,
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        if !matches!(next, '$' | '`' | '"' | '\\' | '\n') {
                            text.push('\\');
                        }
                        text.push(next);
                        self.pos += 1;
                    }
                }
                '$' if self.peek(0) == Some('(') => {
                    self.pos += 1;
                    nested.push(Token::Nested(self.tokens(Some(')'))));
                    text.push('$');
                }
                '`' => {
                    nested.push(Token::Nested(self.tokens(Some('`'))));
                    text.push('$');
                }
                c => text.push(c),
            }
        }
    }
}

/// One simple command: its words, the operator that ended it, and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words, assignments (`A=b`) and redirection targets left out.
    pub words: Vec<String>,
    /// The control operator after it (`&`, `;`, `&&`, …), if any.
    pub terminator: Option<&'static str>,
}

/// Splits tokens into simple commands, descending into subshells and substitutions.
pub fn simple_commands(tokens: &[Token]) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    collect(tokens, &mut out);
    out
}

fn collect(tokens: &[Token], out: &mut Vec<SimpleCommand>) {
    let mut current = SimpleCommand {
        words: Vec::new(),
        terminator: None,
    };
    let mut expect_target = false;
    let mut iter = tokens.iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(word) => {
                if expect_target {
                    expect_target = false;
                } else if current.words.is_empty() && is_assignment(word) {
                    // `A=b cmd`: an assignment, not the command name.
                } else {
                    current.words.push(word.clone());
                }
            }
            Token::Redirect(op) => {
                // Here-documents consumed their delimiter already.
                expect_target = !matches!(*op, "<<" | "<<-");
            }
            Token::Nested(inner) => {
                collect(inner, out);
                // A subshell followed by `&` runs in the background as a whole.
                if let Some(Token::Op("&")) = iter.peek()
                    && current.words.is_empty()
                {
                    out.push(SimpleCommand {
                        words: vec!["(…)".to_owned()],
                        terminator: Some("&"),
                    });
                    iter.next();
                }
            }
            Token::Op(op) => {
                current.terminator = Some(op);
                if !current.words.is_empty() || *op == "&" {
                    out.push(current);
                }
                current = SimpleCommand {
                    words: Vec::new(),
                    terminator: None,
                };
                expect_target = false;
            }
        }
    }
    if !current.words.is_empty() {
        out.push(current);
    }
}

/// `NAME=value`, as in `A=1 cmd`.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
