//! A partial result's checks as a table (format 3, docs/formats.md §2): what `run`
//! writes, that it reads back to the same verdict as the list of objects it replaces,
//! and every way a table can be edited out of shape refused (exit 4, naming the file and
//! the place), whether the result is read whole or first counted as a shard's.

mod common;

use common::Project;
use serde_json::{Value, json};

const MANIFEST: &str = "version: 1
environments:
  - name: lin
checks:
  - id: unit
    run: 'true'
  - id: lint
    run: 'exit 1'
";

/// `lin` split two ways, `unit` passing in both.
const SHARDED: &str = "version: 1
environments:
  - name: lin
    shards: 2
checks:
  - id: unit
    run: 'true {shard} {shards}'
";

const FILE: &str = "out/verify-matrix-lin.json";

fn ran() -> Project {
    let project = Project::new(MANIFEST);
    assert_eq!(project.run_env("lin", "out"), 1, "lint fails");
    project
}

/// `merge --out report.json out`: (exit code, stderr).
fn merge(project: &Project, from: &str) -> (i32, String) {
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json", from])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap(), stderr)
}

/// The raw result `relative`, edited by `edit`, written back.
fn edit_result(project: &Project, relative: &str, edit: impl FnOnce(&mut Value)) {
    let mut raw = project.raw_json(relative);
    edit(&mut raw);
    project.write(relative, &raw.to_string());
}

/// The raw table of `relative`, edited by `edit`, written back.
fn edit_table(project: &Project, relative: &str, edit: impl FnOnce(&mut Value)) {
    edit_result(project, relative, |raw| edit(&mut raw["checks"]));
}

/// `merge` of `out` refused: exit 4 naming lin's result file, no report written; its
/// stderr, for what else it must say.
fn refused(project: &Project, what: &str) -> String {
    let (code, stderr) = merge(project, "out");
    assert_eq!(code, 4, "{what}: {stderr}");
    assert!(
        stderr.contains("verify-matrix-lin.json"),
        "{what}: names no file: {stderr}"
    );
    assert!(
        !project.path().join("report.json").exists(),
        "{what}: a report was written"
    );
    stderr
}

/// The index of `column` in a table.
fn column(table: &Value, column: &str) -> usize {
    table["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == column)
        .unwrap()
}

/// Takes `name` out of a table's columns, and its value out of every row.
fn drop_column(table: &mut Value, name: &str) {
    let at = column(table, name);
    table["columns"].as_array_mut().unwrap().remove(at);
    for row in table["rows"].as_array_mut().unwrap() {
        row.as_array_mut().unwrap().remove(at);
    }
}

#[test]
fn run_writes_its_checks_as_a_table_that_reads_as_the_objects_did() {
    let project = ran();
    let raw = project.raw_json(FILE);
    assert_eq!(raw["format_version"], 3);
    let table = &raw["checks"];
    assert_eq!(
        table.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["columns", "rows"]
    );
    let columns = table["columns"].as_array().unwrap();
    assert_eq!(columns[0], "command_id");
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row.as_array().unwrap().len(), columns.len(), "{row}");
    }
    assert_eq!(rows[1][column(table, "command_id")], "lint");
    assert_eq!(rows[1][column(table, "status")], "FAIL");
    assert_eq!(rows[1][column(table, "exit_code")], 1);
    // Its keys are written once: the file is far smaller than the objects' list.
    let objects = project.json(FILE);
    assert!(
        raw.to_string().len() * 10 < objects.to_string().len() * 9,
        "{raw}"
    );
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 1, "{stderr}");
    let table_report = project.json("report.json");

    // The same result as format 2 wrote it, a list of objects, reads to the same report.
    let mut listed = objects.clone();
    listed["format_version"] = 2.into();
    project.write(FILE, &listed.to_string());
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(project.json("report.json")["rows"], table_report["rows"]);
    assert_eq!(project.json("report.json")["verdict"], "NOT_VERIFIED");
}

#[test]
fn a_table_edited_out_of_shape_is_refused_with_its_place() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 13] = [
        (
            "a column renamed",
            |t| t["columns"][8] = "statu5".into(),
            "the column `statu5` is no field of a check",
        ),
        (
            "a column named twice",
            |t| t["columns"][8] = t["columns"][0].clone(),
            "the column `command_id` is named twice",
        ),
        (
            "a column left out, its values with it",
            |t| drop_column(t, "status"),
            "the columns leave out the field `status`",
        ),
        (
            "an optional column left out",
            |t| drop_column(t, "cause"),
            "the columns leave out the field `cause`",
        ),
        (
            "a row one value short",
            |t| {
                t["rows"][1].as_array_mut().unwrap().pop();
            },
            "a row ends before its column `sharded`",
        ),
        (
            "a row one value long",
            |t| t["rows"][0].as_array_mut().unwrap().push(Value::Null),
            "a row has more values than the",
        ),
        (
            "a row of no values",
            |t| t["rows"][1] = json!([]),
            "a row ends before its column `command_id`",
        ),
        (
            "a row as an object",
            |t| t["rows"][1] = json!({"status": "PASS"}),
            "a check's row",
        ),
        (
            "a status of null",
            |t| {
                let at = column(t, "status");
                t["rows"][1][at] = Value::Null;
            },
            "at `checks.rows[1][8]`",
        ),
        (
            "a key beside the columns and rows",
            |t| t["extra"] = json!([]),
            "unknown field `extra`",
        ),
        (
            "no rows",
            |t| {
                t.as_object_mut().unwrap().remove("rows");
            },
            "missing field `rows`",
        ),
        (
            "a column that is not a name",
            |t| t["columns"][3] = 7.into(),
            "invalid type: integer `7`",
        ),
        (
            "the columns as one string",
            |t| t["columns"] = "command_id".into(),
            "the list of a check's field names",
        ),
    ];
    for (what, edit, says) in cases {
        let project = ran();
        edit_table(&project, FILE, edit);
        let stderr = refused(&project, what);
        assert!(stderr.contains(says), "{what}: {stderr}");
        assert!(
            stderr.contains(" line "),
            "{what}: names no place: {stderr}"
        );
    }
}

#[test]
fn rows_before_their_columns_are_refused() {
    let project = ran();
    let raw = project.raw_json(FILE);
    // `serde_json` writes keys sorted; the text is built by hand to put `rows` first.
    let rows = raw["checks"]["rows"].to_string();
    let columns = raw["checks"]["columns"].to_string();
    let mut top = raw.clone();
    top["checks"] = json!("CHECKS");
    let text = top.to_string().replace(
        "\"CHECKS\"",
        &format!("{{\"rows\":{rows},\"columns\":{columns}}}"),
    );
    project.write(FILE, &text);
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("the table of checks has `rows` before its `columns`"),
        "{stderr}"
    );
}

#[test]
fn columns_in_another_order_read_each_value_by_its_name() {
    let project = ran();
    // Every column and every row's values reversed: the same checks.
    edit_table(&project, FILE, |t| {
        t["columns"].as_array_mut().unwrap().reverse();
        for row in t["rows"].as_array_mut().unwrap() {
            row.as_array_mut().unwrap().reverse();
        }
    });
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 1, "{stderr}");
    let report = project.json("report.json");
    let lint = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "lint")
        .unwrap();
    assert_eq!(lint["result"], "FAIL", "{report}");
    assert_eq!(lint["exit_code"], 1, "{report}");

    // The columns reordered and the rows not: `status` and `summary` trade places,
    // and a summary is no status.
    edit_table(&project, FILE, |t| {
        let (s, m) = (column(t, "status"), column(t, "summary"));
        t["columns"].as_array_mut().unwrap().swap(s, m);
    });
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("unknown variant"), "{stderr}");
}

#[test]
fn a_shards_table_out_of_shape_is_refused_when_first_counted() {
    let project = Project::new(SHARDED);
    for k in 1..=2 {
        let out = project
            .std_cmd()
            .args(["run", "--env", "lin", "--shard", &format!("{k}/2")])
            .args(["--out", &format!("s/{k}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let (code, stderr) = merge(&project, "s");
    assert_eq!(code, 0, "{stderr}");
    // A row one value long in shard 2: refused, not counted as a check and passed over.
    let file = "s/2/verify-matrix-lin@2of2.json";
    edit_table(&project, file, |t| {
        t["rows"][0].as_array_mut().unwrap().push(Value::Null);
    });
    let (code, stderr) = merge(&project, "s");
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("verify-matrix-lin@2of2.json")
            && stderr.contains("a row has more values than the"),
        "{stderr}"
    );
    // Shard 2 with no rows at all: its check is missing, never verified.
    edit_table(&project, file, |t| t["rows"] = json!([]));
    std::fs::remove_file(project.path().join("report.json")).unwrap();
    let (code, stderr) = merge(&project, "s");
    assert_ne!(code, 0, "{stderr}");
    if code != 4 {
        assert_ne!(project.json("report.json")["verdict"], "VERIFIED");
    }
}

#[test]
fn a_row_naming_another_environment_is_a_contradiction() {
    let project = ran();
    edit_table(&project, FILE, |t| {
        let at = column(t, "environment");
        t["rows"][0][at] = "mac".into();
    });
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 1, "{stderr}");
    let report = project.json("report.json");
    let unit = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "unit")
        .unwrap();
    assert_eq!(unit["result"], "FAIL", "{report}");
    let contradiction = report["contradictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "unit")
        .unwrap();
    assert!(
        contradiction["reason"]
            .as_str()
            .unwrap()
            .contains("it names environment `mac` in the result of `lin`"),
        "{report}"
    );
}

/// A record inside a check (its test counts, its shards' facts) given as a bare list of
/// its values, the layout serde's derived readers take besides an object: refused in a
/// table's row and in a list of objects alike, naming the place (exit 4, no report).
#[test]
fn a_record_given_as_a_list_of_its_values_is_refused_at_any_depth() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 3] = [
        (
            "test counts as a list, in a row",
            |r| {
                let at = column(&r["checks"], "test_counts");
                r["checks"]["rows"][0][at] = json!([5, 0, 0, "libtest", 0, 0]);
            },
            "at `checks.rows[0][15]`",
        ),
        (
            "the shards' facts as a list, in a row",
            |r| {
                let at = column(&r["checks"], "sharded");
                r["checks"]["rows"][1][at] = json!([null, null, [], [], 0]);
            },
            "at `checks.rows[1][27]`",
        ),
        (
            "test counts as a list, in a list of objects",
            |r| {
                common::checks_as_objects(r);
                r["checks"][0]["test_counts"] = json!([5, 0, 0, "libtest", 0, 0]);
            },
            "at `checks[0].test_counts`",
        ),
    ];
    for (what, edit, says) in cases {
        let project = ran();
        edit_result(&project, FILE, edit);
        let stderr = refused(&project, what);
        assert!(
            stderr.contains(says) && stderr.contains("invalid type: sequence"),
            "{what}: {stderr}"
        );
    }
}

/// A report (§3) is read the same way: a record in a row given as a list of its values
/// is refused where the report is read (`render`), naming the place.
#[test]
fn a_reports_record_given_as_a_list_of_its_values_is_refused() {
    let project = ran();
    let (code, stderr) = merge(&project, "out");
    assert_eq!(code, 1, "{stderr}");
    let mut report = project.raw_json("report.json");
    report["rows"][0]["detail"]["test_counts"] = json!([5, 0, 0, "libtest", 0, 0]);
    project.write("edited.json", &report.to_string());
    let out = project
        .std_cmd()
        .args(["render", "edited.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("edited.json")
            && stderr.contains("at `rows[0].detail.test_counts`: invalid type: sequence"),
        "{stderr}"
    );
}
