#!/usr/bin/env python3
"""extract_samples.py SERIAL_LOG OUT_DIR — writes the files capture_perftest45.sh printed.

The guest script prints each file base64-encoded between "ROCEMU-SAMPLE BEGIN name" and
"ROCEMU-SAMPLE END" on the serial console; this decodes them (ignoring the console's carriage
returns and any kernel line in between that is not base64) into OUT_DIR/name.
"""
import base64
import os
import re
import sys


def main():
    log, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    name, chunks, n = None, [], 0
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = re.match(r"^ROCEMU-SAMPLE BEGIN (\S+)$", line)
            if m:
                name, chunks = m.group(1), []
            elif line == "ROCEMU-SAMPLE END" and name:
                with open(os.path.join(out_dir, name), "wb") as out:
                    out.write(base64.b64decode("".join(chunks)))
                name, n = None, n + 1
            elif name and re.fullmatch(r"[A-Za-z0-9+/=]+", line):
                chunks.append(line)
    print("%d files in %s" % (n, out_dir))
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
