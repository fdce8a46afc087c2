"""Installs pip into the running interpreter (a virtual environment made with
`--without-pip`, where Debian's python3-venv, which carries ensurepip, is missing) from
pip's wheel on PyPI's simple index (what pip itself reads), checked against the SHA-256
the index lists for it.

    python bootstrap-pip.py VERSION
"""

import hashlib
import html
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

version = sys.argv[1]
index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
with urllib.request.urlopen(f"{index}/pip/", timeout=60) as answer:
    page = answer.read().decode()
name = f"pip-{version}-py3-none-any.whl"
found = re.search(r'href="([^"#]*/' + re.escape(name) + r')#sha256=([0-9a-f]{64})"', page)
if not found:
    sys.exit(f"error: {index}/pip/ does not list {name}")
url, sha256 = html.unescape(found.group(1)), found.group(2)
with urllib.request.urlopen(url, timeout=120) as answer:
    data = answer.read()
if hashlib.sha256(data).hexdigest() != sha256:
    sys.exit(f"error: {name} does not have the SHA-256 the index lists")
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, name)
    with open(path, "wb") as file:
        file.write(data)
    # A wheel is a zip that Python can run pip from.
    subprocess.run([sys.executable, os.path.join(path, "pip"), "install", "--quiet",
                    "--disable-pip-version-check", "--no-index", path], check=True)
