use super::super::details::last_lines;
use super::*;

#[test]
fn a_marker_key_cannot_close_the_comment_or_break_the_line() {
    assert_eq!(
        marker("ci/verify-matrix.yml"),
        "<!-- cargo-verify-matrix:ci/verify-matrix.yml -->"
    );
    assert_eq!(
        marker("a-->b\n<x>---"),
        "<!-- cargo-verify-matrix:a-b x -->"
    );
}

#[test]
fn last_lines_counts_from_the_end() {
    assert_eq!(last_lines("a\nb\nc", 2), "b\nc");
    assert_eq!(last_lines("a\nb\nc", 3), "a\nb\nc");
    assert_eq!(last_lines("a\nb\nc", 9), "a\nb\nc");
}

#[test]
fn shapes_degrade_in_the_documented_order() {
    let all = shapes(40);
    let tails: Vec<usize> = all.iter().map(|s| s.tail_lines).collect();
    assert_eq!(&tails[..4], &[40, 20, 10, 5]);
    let first = |f: fn(&Shape) -> bool| all.iter().position(f).unwrap();
    let no_tails = first(|s| s.tail_lines == 0);
    let no_details = first(|s| !s.details);
    let fold_grid = first(|s| s.fold_grid);
    let fold_rows = first(|s| s.fold_rows);
    let link = first(|s| s.link_only);
    assert!(no_tails < no_details && no_details < fold_grid);
    assert!(fold_grid < fold_rows && fold_rows < link);
    assert_eq!(all.last().unwrap().max_listed, 0);
}
