"""A recording, stateful GitHub stand-in on 127.0.0.1 for the end-to-end workflow runs.

    python3 mock_github.py PORT_FILE LOG_FILE RELEASES_DIR PR_HEAD_FILE ARTIFACTS_DIR RUNS_FILE

Keeps what GitHub keeps for repository o/r and pull request 12, as the REST API shows
it: the PR's comments (list, create, update, delete), check runs (create, update, list
by commit and name), and the PR itself, whose head is read from PR_HEAD_FILE (a push
rewrites it). The token's user is refused (403), as for an installation token. Release
assets are served from RELEASES_DIR under /releases/. The completed workflow runs are
those RUNS_FILE lists (a JSON array the script appends to); a run's artifacts are the
folders under ARTIFACTS_DIR/RUN_ID, as the upload-artifact stand-in keeps them, listed
with ids RUN_ID * 100 + n and downloaded as zip archives (zipfile) through a redirect to
/_storage/, which is not the API (no token goes there, nothing is recorded). Every API
request is appended to LOG_FILE as one JSON line; GET /_state returns what is stored
(not recorded).
"""

import io
import json
import os
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

port_file, log_file, releases, pr_head_file, artifacts_dir, runs_file = sys.argv[1:7]

lock = threading.Lock()
state = {"comments": [], "check_runs": [], "next_id": 1000}
COMMENTS = "/repos/o/r/issues/12/comments"


def next_id():
    state["next_id"] += 1
    return state["next_id"]


def pr_head():
    with open(pr_head_file) as f:
        return f.read().strip()


def completed_runs():
    try:
        with open(runs_file) as f:
            return json.load(f)
    except FileNotFoundError:
        return []


def artifacts_of(run_id):
    """The run's artifacts as the API lists them: (json, folder) pairs."""
    folder = os.path.join(artifacts_dir, str(run_id))
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    return [({"id": run_id * 100 + n, "name": name, "expired": False,
              "size_in_bytes": sum(os.path.getsize(os.path.join(d, f))
                                   for d, _, fs in os.walk(os.path.join(folder, name))
                                   for f in fs)},
             os.path.join(folder, name))
            for n, name in enumerate(names, 1)]


def jobs_of(run_id, attempt):
    """The run's jobs as GitHub lists them: `jobs-RUN-ATTEMPT.json` beside the artifacts
    when a scenario wrote one; else the plan job and one job per leg that uploaded
    results (labelled ubuntu-latest, on the runner the leg's results name), as GitHub
    would list the workflow's jobs."""
    override = os.path.join(artifacts_dir, f"jobs-{run_id}-{attempt}.json")
    if os.path.isfile(override):
        with open(override) as f:
            return json.load(f)
    job = lambda name, runner: {"name": name, "status": "completed", "conclusion": "success",
                                "labels": ["ubuntu-latest"], "run_attempt": attempt,
                                "runner_name": runner, "runner_group_name": "GitHub Actions"}
    jobs = [job("plan", "GitHub Actions 1")]
    for _, folder in artifacts_of(run_id):
        for d, _, files in os.walk(folder):
            for f in sorted(files):
                if f.startswith("verify-matrix-") and f.endswith(".json"):
                    with open(os.path.join(d, f)) as result:
                        try:
                            data = json.load(result)
                        except ValueError:
                            continue
                    runner = ((data.get("runner") or {}).get("actions") or {}).get("name")
                    # The workflow names a shard's leg `verify-run (ENV, K/N)`.
                    shard = data.get("shard") or {}
                    slice_ = f", {shard['index']}/{shard['count']}" if shard else ""
                    jobs.append(job(f"run ({data.get('environment')}{slice_})", runner))
    return jobs


def zipped(folder):
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as z:
        for d, _, files in os.walk(folder):
            for f in files:
                path = os.path.join(d, f)
                z.write(path, os.path.relpath(path, folder))
    return data.getvalue()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body):
        with open(log_file, "a") as log:
            log.write(json.dumps({
                "method": self.command,
                "path": self.path,
                "authorization": self.headers.get("Authorization", ""),
                "body": body,
            }) + "\n")

    def body(self):
        length = int(self.headers.get("Content-Length", 0))
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path.startswith("/releases/"):
            file = os.path.join(releases, url.path[len("/releases/"):])
            if not os.path.isfile(file):
                self.send_error(404)
                return
            data = open(file, "rb").read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if url.path == "/_state":
            with lock:
                self.reply(200, state)
            return
        if url.path.startswith("/_storage/"):
            artifact_id = int(url.path.rsplit("/", 1)[1].split(".")[0])
            for run in completed_runs():
                for listed, folder in artifacts_of(run["id"]):
                    if listed["id"] == artifact_id:
                        data = zipped(folder)
                        self.send_response(200)
                        self.send_header("Content-Type", "application/zip")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        return
            self.send_error(404)
            return
        self.record(None)
        query = parse_qs(url.query)
        with lock:
            if url.path == "/user":
                self.reply(403, {"message": "Resource not accessible by integration"})
            elif url.path == "/repos/o/r/pulls/12":
                self.reply(200, {"number": 12, "state": "open", "head": {"sha": pr_head()}})
            elif url.path == COMMENTS:
                page = int(query.get("page", ["1"])[0])
                per_page = int(query.get("per_page", ["30"])[0])
                self.reply(200, state["comments"][(page - 1) * per_page:page * per_page])
            elif url.path == "/repos/o/r/actions/runs":
                branch = query.get("branch", [None])[0]
                runs = [r for r in reversed(completed_runs()) if branch in (None, r["head_branch"])]
                self.reply(200, {"total_count": len(runs), "workflow_runs": runs})
            elif url.path.startswith("/repos/o/r/actions/runs/") and url.path.endswith("/jobs"):
                parts = url.path.split("/")
                run_id, attempt = int(parts[6]), int(parts[8])
                jobs = jobs_of(run_id, attempt)
                self.reply(200, {"total_count": len(jobs), "jobs": jobs})
            elif url.path.startswith("/repos/o/r/actions/runs/") and url.path.endswith("/artifacts"):
                run_id = int(url.path.split("/")[6])
                name = query.get("name", [None])[0]
                listed = [a for a, _ in artifacts_of(run_id) if name in (None, a["name"])]
                self.reply(200, {"total_count": len(listed), "artifacts": listed})
            elif url.path.startswith("/repos/o/r/actions/artifacts/") and url.path.endswith("/zip"):
                artifact_id = url.path.split("/")[6]
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/_storage/{artifact_id}.zip?sig=e2e")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif url.path.startswith("/repos/o/r/commits/") and url.path.endswith("/check-runs"):
                sha = url.path.split("/")[5]
                name = query.get("check_name", [None])[0]
                runs = [r for r in state["check_runs"]
                        if r["head_sha"] == sha and name in (None, r["name"])]
                self.reply(200, {"total_count": len(runs), "check_runs": runs})
            else:
                self.reply(404, {"message": "Not Found"})

    def do_POST(self):
        body = self.body()
        self.record(body)
        with lock:
            if self.path == COMMENTS:
                id = next_id()
                comment = {
                    "id": id, "body": body["body"],
                    "user": {"login": "github-actions[bot]", "type": "Bot"},
                    "created_at": f"2026-11-23T00:00:{len(state['comments']):02}Z",
                    "html_url": f"https://github.com/o/r/pull/12#issuecomment-{id}",
                }
                state["comments"].append(comment)
                self.reply(201, comment)
            elif self.path == "/repos/o/r/check-runs":
                id = next_id()
                run = dict(body, id=id, html_url=f"https://github.com/o/r/runs/{id}")
                run.setdefault("conclusion", None)
                state["check_runs"].append(run)
                self.reply(201, run)
            else:
                self.reply(404, {"message": "Not Found"})

    def do_PATCH(self):
        body = self.body()
        self.record(body)
        kind, _, id = self.path.rpartition("/")
        with lock:
            store = {"/repos/o/r/issues/comments": "comments",
                     "/repos/o/r/check-runs": "check_runs"}.get(kind)
            found = [x for x in state.get(store, []) if str(x["id"]) == id]
            if not found:
                self.reply(404, {"message": "Not Found"})
                return
            found[0].update(body)
            self.reply(200, found[0])

    def do_DELETE(self):
        self.record(None)
        id = self.path.rpartition("/")[2]
        with lock:
            before = len(state["comments"])
            state["comments"] = [c for c in state["comments"] if str(c["id"]) != id]
            self.send_response(204 if len(state["comments"]) < before else 404)
            self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
