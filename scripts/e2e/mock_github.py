"""A recording GitHub stand-in on 127.0.0.1 for the end-to-end workflow run.

    python3 mock_github.py PORT_FILE LOG_FILE RELEASES_DIR

Answers what `report --to comment,check-run,summary` asks (the token's user, the PR's
comments, comment and check-run creates) and serves release assets from RELEASES_DIR
under /releases/. Every API request is appended to LOG_FILE as one JSON line.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log_file, releases = sys.argv[1], sys.argv[2], sys.argv[3]


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

    def do_GET(self):
        if self.path.startswith("/releases/"):
            file = os.path.join(releases, self.path[len("/releases/"):])
            if not os.path.isfile(file):
                self.send_error(404)
                return
            data = open(file, "rb").read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.record(None)
        if self.path == "/user":
            self.reply(403, {"message": "Resource not accessible by integration"})
        elif "/comments" in self.path:
            self.reply(200, [])
        else:
            self.reply(404, {"message": "Not Found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"null")
        self.record(body)
        if self.path.endswith("/comments"):
            self.reply(201, {"id": 1, "body": body.get("body", "")})
        elif self.path.endswith("/check-runs"):
            self.reply(201, {"id": 2})
        else:
            self.reply(404, {"message": "Not Found"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
