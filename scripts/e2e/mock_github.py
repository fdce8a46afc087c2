"""A recording, stateful GitHub stand-in on 127.0.0.1 for the end-to-end workflow runs.

    python3 mock_github.py PORT_FILE LOG_FILE RELEASES_DIR PR_HEAD_FILE

Keeps what GitHub keeps for repository o/r and pull request 12, as the REST API shows
it: the PR's comments (list, create, update, delete), check runs (create, update, list
by commit and name), and the PR itself, whose head is read from PR_HEAD_FILE (a push
rewrites it). The token's user is refused (403), as for an installation token. Release
assets are served from RELEASES_DIR under /releases/. Every API request is appended to
LOG_FILE as one JSON line; GET /_state returns what is stored (not recorded).
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

port_file, log_file, releases, pr_head_file = sys.argv[1:5]

lock = threading.Lock()
state = {"comments": [], "check_runs": [], "next_id": 1000}
COMMENTS = "/repos/o/r/issues/12/comments"


def next_id():
    state["next_id"] += 1
    return state["next_id"]


def pr_head():
    with open(pr_head_file) as f:
        return f.read().strip()


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
