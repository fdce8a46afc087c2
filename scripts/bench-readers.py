"""every_format_reports DIR FILES CASES: the same test run written in every report
format the `reports:` readers know, one folder per format under DIR (DIR/<format>/),
FILES files of CASES tests each: 2 % failing with a stack trace of about 1 KiB naming
its file and line, 1 % skipped, the rest passing. Prints, per format, the counts every
reader must give (passed failed skipped) on one line: `FORMAT PASSED FAILED SKIPPED`.
"""
import json, os, sys
from xml.sax.saxutils import escape, quoteattr

root, files, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def tests(f):
    """Each test of file f: (class, name, outcome, seconds, message, trace, line)."""
    for c in range(cases):
        cls = f"app.module_{f:03d}.Behaviour"
        name = f"behaviour_{c:04d}_case_{c % 7}"
        line = 10 + c % 150
        if c % 50 == 7:
            trace = "".join(f"  at app.module_{f:03d}.helper_{i} (src/module_{f:03d}.js:{i + 1}:7)\n" for i in range(20))
            trace = f"  at {name} (src/module_{f:03d}.js:{line}:9)\n" + trace
            yield cls, name, "failed", c % 1000 / 1000, f"mismatch in case {c}: expected 42, got 41", trace, line
        elif c % 100 == 3:
            yield cls, name, "skipped", 0.0, "not on this platform", "", line
        else:
            yield cls, name, "passed", c % 1000 / 1000, "", "", line


def write(fmt, f, ext, text):
    folder = os.path.join(root, fmt)
    # The files the failures name, so that each is located as in a real checkout.
    for source in (f"src/module_{f:03d}.js", f"src/module_{f:03d}.test.js", f"spec/module_{f:03d}_spec.rb"):
        os.makedirs(os.path.dirname(os.path.join(folder, source)), exist_ok=True)
        with open(os.path.join(folder, source), "w") as fh:
            fh.write("\n" * 200)
    with open(os.path.join(folder, f"report-{f:03d}.{ext}"), "w") as fh:
        fh.write(text)


def junit(f):
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           f'<testsuites><testsuite name="module_{f:03d}" tests="{cases}" failures="{sum(1 for t in tests(f) if t[2] == "failed")}" skipped="{sum(1 for t in tests(f) if t[2] == "skipped")}">']
    for cls, name, outcome, secs, message, trace, line in tests(f):
        head = f'<testcase classname="{cls}" name="{name}" time="{secs:.3f}"'
        if outcome == "failed":
            out.append(f"{head}><failure message={quoteattr(message)}>{escape(message + chr(10) + trace)}</failure></testcase>")
        elif outcome == "skipped":
            out.append(f"{head}><skipped message={quoteattr(message)}/></testcase>")
        else:
            out.append(f"{head}/>")
    out.append("</testsuite></testsuites>")
    return "\n".join(out) + "\n"


def trx(f):
    results, definitions = [], []
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for i, (cls, name, outcome, secs, message, trace, line) in enumerate(tests(f)):
        counts[outcome] += 1
        tid = f"{f:08x}-0000-0000-0000-{i:012x}"
        word = {"passed": "Passed", "failed": "Failed", "skipped": "NotExecuted"}[outcome]
        body = ""
        if outcome == "failed":
            body = f"<Output><ErrorInfo><Message>{escape(message)}</Message><StackTrace>{escape(trace)}</StackTrace></ErrorInfo></Output>"
        results.append(f'<UnitTestResult executionId="{tid}" testId="{tid}" testName="{name}" duration="00:00:0{secs:.7f}" outcome="{word}">{body}</UnitTestResult>')
        definitions.append(f'<UnitTest name="{name}" id="{tid}"><TestMethod className="{cls}" name="{name}" /></UnitTest>')
    executed = counts["passed"] + counts["failed"]
    return ('<?xml version="1.0" encoding="utf-8"?>\n<TestRun id="r" name="bench" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">\n<Results>\n'
            + "\n".join(results) + "\n</Results>\n<TestDefinitions>\n" + "\n".join(definitions)
            + f'\n</TestDefinitions>\n<ResultSummary outcome="Failed"><Counters total="{cases}" executed="{executed}" passed="{counts["passed"]}" failed="{counts["failed"]}" notExecuted="{counts["skipped"]}" /></ResultSummary>\n</TestRun>\n')


def nunit(f):
    out = []
    n = {"passed": 0, "failed": 0, "skipped": 0}
    for cls, name, outcome, secs, message, trace, line in tests(f):
        n[outcome] += 1
        word = {"passed": "Passed", "failed": "Failed", "skipped": "Skipped"}[outcome]
        body = ""
        if outcome == "failed":
            body = f"<failure><message>{escape(message)}</message><stack-trace>{escape(trace)}</stack-trace></failure>"
        elif outcome == "skipped":
            body = f"<reason><message>{escape(message)}</message></reason>"
        out.append(f'<test-case name="{name}" fullname="{cls}.{name}" result="{word}" duration="{secs:.3f}">{body}</test-case>')
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<test-run testcasecount="{cases}" result="Failed" total="{cases}" passed="{n["passed"]}" failed="{n["failed"]}" skipped="{n["skipped"]}">\n'
            f'<test-suite type="TestFixture" name="Behaviour" fullname="app.module_{f:03d}.Behaviour" total="{cases}" passed="{n["passed"]}" failed="{n["failed"]}" skipped="{n["skipped"]}">\n'
            + "\n".join(out) + "\n</test-suite>\n</test-run>\n")


def xunit(f):
    out = []
    n = {"passed": 0, "failed": 0, "skipped": 0}
    for cls, name, outcome, secs, message, trace, line in tests(f):
        n[outcome] += 1
        word = {"passed": "Pass", "failed": "Fail", "skipped": "Skip"}[outcome]
        body = ""
        if outcome == "failed":
            body = f'<failure exception-type="AssertionError"><message>{escape(message)}</message><stack-trace>{escape(trace)}</stack-trace></failure>'
        elif outcome == "skipped":
            body = f"<reason>{escape(message)}</reason>"
        out.append(f'<test name="{cls}.{name}" type="{cls}" method="{name}" time="{secs:.3f}" result="{word}">{body}</test>')
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<assemblies>\n<assembly name="module_{f:03d}.dll" total="{cases}" passed="{n["passed"]}" failed="{n["failed"]}" skipped="{n["skipped"]}" errors="0">\n<errors />\n'
            f'<collection name="module_{f:03d}" total="{cases}">\n' + "\n".join(out) + "\n</collection>\n</assembly>\n</assemblies>\n")


def ctrf(f):
    out = []
    for cls, name, outcome, secs, message, trace, line in tests(f):
        test = {"name": name, "status": outcome, "duration": int(secs * 1000), "suite": cls,
                "filePath": f"src/module_{f:03d}.js"}
        if outcome == "failed":
            test.update(message=message, trace=trace, line=line)
        out.append(test)
    n = {s: sum(1 for t in out if t["status"] == s) for s in ("passed", "failed", "skipped")}
    return json.dumps({"results": {"tool": {"name": "bench"}, "summary": {"tests": cases, **n, "pending": 0, "other": 0, "start": 0, "stop": 1}, "tests": out}}) + "\n"


def jest(f):
    assertions, failed = [], 0
    for cls, name, outcome, secs, message, trace, line in tests(f):
        failed += outcome == "failed"
        assertions.append({"ancestorTitles": cls.split("."), "title": name, "fullName": f"{cls} {name}",
                           "status": {"skipped": "pending"}.get(outcome, outcome), "duration": int(secs * 1000),
                           "failureMessages": [f"Error: {message}\n{trace}"] if outcome == "failed" else [],
                           "invocations": 1})
    return json.dumps({"numTotalTests": cases, "numFailedTests": failed, "numRuntimeErrorTestSuites": 0, "success": failed == 0,
                       "testResults": [{"name": f"src/module_{f:03d}.test.js", "status": "failed" if failed else "passed",
                                        "message": "", "assertionResults": assertions}]}) + "\n"


def mocha(f):
    passes, failures, pending, every = [], [], [], []
    for cls, name, outcome, secs, message, trace, line in tests(f):
        test = {"title": name, "fullTitle": f"{cls} {name}", "file": f"src/module_{f:03d}.test.js",
                "duration": int(secs * 1000), "currentRetry": 0, "err": {}}
        if outcome == "failed":
            test["err"] = {"message": message, "stack": f"AssertionError: {message}\n{trace}"}
            failures.append(test)
        elif outcome == "skipped":
            pending.append(test)
        else:
            passes.append(test)
        every.append(test)
    return json.dumps({"stats": {"suites": 1, "tests": cases, "passes": len(passes), "pending": len(pending), "failures": len(failures)},
                       "tests": every, "pending": pending, "failures": failures, "passes": passes}) + "\n"


def rspec(f):
    examples = []
    for cls, name, outcome, secs, message, trace, line in tests(f):
        example = {"id": f"./spec/module_{f:03d}_spec.rb[1:{len(examples) + 1}]", "description": name,
                   "full_description": f"{cls} {name}", "status": {"skipped": "pending"}.get(outcome, outcome),
                   "file_path": f"./spec/module_{f:03d}_spec.rb", "line_number": line, "run_time": secs,
                   "pending_message": message if outcome == "skipped" else None}
        if outcome == "failed":
            example["exception"] = {"class": "RSpec::Expectations::ExpectationNotMetError", "message": message,
                                    "backtrace": trace.strip().splitlines()}
        examples.append(example)
    n = {s: sum(1 for e in examples if e["status"] == s) for s in ("failed", "pending")}
    return json.dumps({"version": "3.13.0", "examples": examples,
                       "summary": {"duration": 1.0, "example_count": cases, "failure_count": n["failed"],
                                   "pending_count": n["pending"], "errors_outside_of_examples_count": 0}}) + "\n"


def go(f):
    package = f"example.com/app/module_{f:03d}"
    out = []
    for cls, name, outcome, secs, message, trace, line in tests(f):
        test = f"Test_{name}"
        out.append({"Action": "run", "Package": package, "Test": test})
        out.append({"Action": "output", "Package": package, "Test": test, "Output": f"=== RUN   {test}\n"})
        if outcome == "failed":
            out.append({"Action": "output", "Package": package, "Test": test, "Output": f"    module_test.go:{line}: {message}\n"})
        action = {"passed": "pass", "failed": "fail", "skipped": "skip"}[outcome]
        out.append({"Action": "output", "Package": package, "Test": test, "Output": f"--- {action.upper()}: {test} ({secs:.2f}s)\n"})
        out.append({"Action": action, "Package": package, "Test": test, "Elapsed": secs})
    out.append({"Action": "fail", "Package": package, "Elapsed": 1.0})
    return "".join(json.dumps(e) + "\n" for e in out)


def tap(f):
    out = ["TAP version 13", f"1..{cases}"]
    for i, (cls, name, outcome, secs, message, trace, line) in enumerate(tests(f), 1):
        if outcome == "failed":
            out += [f"not ok {i} - {name}", "  ---", f"  duration_ms: {secs * 1000:.3f}",
                    f"  location: 'src/module_{f:03d}.test.js:{line}:9'", f"  error: '{message}'", "  stack: |-"]
            out += ["    " + l for l in trace.strip().splitlines()]
            out.append("  ...")
        elif outcome == "skipped":
            out.append(f"ok {i} - {name} # SKIP {message}")
        else:
            out += [f"ok {i} - {name}", "  ---", f"  duration_ms: {secs * 1000:.3f}", "  ..."]
    return "\n".join(out) + "\n"


formats = [("junit", "xml", junit), ("trx", "trx", trx), ("nunit", "xml", nunit), ("xunit", "xml", xunit),
           ("ctrf", "json", ctrf), ("jest-json", "json", jest), ("mocha-json", "json", mocha),
           ("rspec-json", "json", rspec), ("go-test-json", "json", go), ("tap", "tap", tap)]
want = [0, 0, 0]
for f in range(files):
    for outcome in (t[2] for t in tests(f)):
        want[["passed", "failed", "skipped"].index(outcome)] += 1
for name, ext, writer in formats:
    for f in range(files):
        write(name, f, ext, writer(f))
    print(name, ext, *want)
