#!/usr/bin/env python3
"""fetch-d3.py DIR - put D3's dist/d3.min.js and LICENSE into DIR (issue 37).

DIR/d3.pin names the one tarball (the npm registry's d3) and its sha512
(the registry's dist.integrity). The tarball is downloaded into memory,
its hash compared with the pin before anything is read from it, and only
its two files written (each through a temporary name, so a cut download
never leaves half a file). Nothing to do when both files are there and
d3.min.js opens with the pinned version's banner.

Exit 0 done (or nothing to do), 1 the download or the hash failed (the
message says which; the files already there are left alone), 2 the pin
is unreadable.
"""
import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.request

WANT = {"package/dist/d3.min.js": "d3.min.js", "package/LICENSE": "LICENSE"}
LIMIT = 16 << 20  # the 7.9.0 tarball is under 1 MB


def say(msg):
    print("setup: d3: " + msg, flush=True)


def read_pin(path):
    pin = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, value = line.partition(" ")
                pin[key] = value.strip()
    for key in ("version", "tarball", "integrity"):
        if not pin.get(key):
            raise ValueError("%s: no %s line" % (path, key))
    if not pin["integrity"].startswith("sha512-"):
        raise ValueError("%s: integrity is not a sha512- value" % path)
    return pin


def present(d, version):
    try:
        with open(os.path.join(d, "d3.min.js"), "rb") as f:
            head = f.read(200)
        return os.path.isfile(os.path.join(d, "LICENSE")) and (b" v" + version.encode() + b" ") in head
    except OSError:
        return False


def main():
    if len(sys.argv) != 2:
        print("usage: fetch-d3.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    try:
        pin = read_pin(os.path.join(d, "d3.pin"))
    except (OSError, ValueError) as e:
        say("cannot read the pin: %s" % e)
        return 2
    if present(d, pin["version"]):
        say("D3 %s is in %s" % (pin["version"], d))
        return 0
    say("fetching %s" % pin["tarball"])
    try:
        with urllib.request.urlopen(pin["tarball"], timeout=60) as r:
            body = r.read(LIMIT + 1)
    except OSError as e:
        say("could not download %s: %s" % (pin["tarball"], e))
        return 1
    if len(body) > LIMIT:
        say("%s is larger than %d bytes: not the pinned tarball" % (pin["tarball"], LIMIT))
        return 1
    got = "sha512-" + base64.b64encode(hashlib.sha512(body).digest()).decode()
    if got != pin["integrity"]:
        say("%s: sha512 %s, the pin says %s: not used" % (pin["tarball"], got, pin["integrity"]))
        return 1
    found = {}
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        for m in tar.getmembers():
            if m.name in WANT and m.isfile():
                found[WANT[m.name]] = tar.extractfile(m).read()
    missing = [n for n in WANT.values() if n not in found]
    if missing:
        say("the tarball lacks %s" % ", ".join(missing))
        return 1
    for name, data in found.items():
        tmp = os.path.join(d, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(d, name))
    say("D3 %s (sha512 verified) in %s: d3.min.js, LICENSE" % (pin["version"], d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
