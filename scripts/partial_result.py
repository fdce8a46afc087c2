"""A partial result file read and written as the tool writes it (docs/formats.md §2).

`load` gives `checks` as the list of the checks' objects, whichever layout the file has;
`dump` writes them back as the table of format 3 (`columns` once, a row per check),
compact, with the columns of the file loaded (the tool's own order).
"""

import json

# The fields an object leaves out when it has none: `null` in a row.
OPTIONAL = ("cause", "items", "tests", "sharded")


def load(path):
    with open(path) as f:
        result = json.load(f)
    checks = result["checks"]
    if isinstance(checks, dict):
        columns = checks["columns"]
        result["checks"] = [
            {c: v for c, v in zip(columns, row) if not (c in OPTIONAL and v is None)}
            for row in checks["rows"]
        ]
        result["_columns"] = columns
    return result


def dump(result, path):
    result = dict(result)
    columns = result.pop("_columns", None)
    if columns is not None:
        rows = [[check.get(c) for c in columns] for check in result["checks"]]
        result["checks"] = {"columns": columns, "rows": rows}
    with open(path, "w") as f:
        json.dump(result, f, separators=(",", ":"))  # compact, as the tool writes
