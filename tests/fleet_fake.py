#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Nodes that misbehave, for tests/fleet.sh: each port answers the
central's pull like a vitalsd http output would, but sends something the
remote output must refuse.

    fleet_fake.py ADDR SAMPLE_FILE

SAMPLE_FILE is a real epoch file (of another host).  Ports:
  8001  host fakea: lists one file, sends SAMPLE_FILE (an epoch of another host)
  8002  host fakeb: lists one file, sends bytes that are not gzip
  8003  host fakec: lists one small file, sends 2 MiB (over max_file)
  8004  accepts, reads the request and never answers
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import time

ADDR, SAMPLE = sys.argv[1], sys.argv[2]
NAME = "20260101T000000.000Z_%s.json.gz"


def handler(port):
    host = {8001: "fakea", 8002: "fakeb", 8003: "fakec"}.get(port, "faked")

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, body, ctype="application/json"):
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if port == 8004:
                time.sleep(3600)
                return
            p = self.path
            if p.startswith("/api/v1/hosts"):
                self.send(json.dumps({"hosts": [], "local": host}).encode())
            elif p.startswith("/api/v1/files"):
                f = [] if "since=" in p else [
                    {"name": NAME % host, "host": host,
                     "start_ns": 1767225600000000000, "bytes": 100}]
                self.send(json.dumps({"files": f, "more": False}).encode())
            elif p.startswith("/api/v1/file/"):
                if port == 8001:
                    with open(SAMPLE, "rb") as fh:
                        self.send(fh.read(), "application/gzip")
                elif port == 8002:
                    self.send(b"\x1f\x8bthis is not a gzip stream" * 10,
                              "application/gzip")
                else:
                    self.send(os.urandom(2 << 20), "application/gzip")
            else:
                self.send_error(404)
    return H


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


for port in (8001, 8002, 8003, 8004):
    s = Server((ADDR, port), handler(port))
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", flush=True)
while True:
    time.sleep(3600)
