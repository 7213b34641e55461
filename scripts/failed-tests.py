#!/usr/bin/env python3
"""Names the failed tests of a `swift test --xunit-output` run, from its xUnit files, with their messages.

swift test's own output can lose lines (a child process that inherited its event pipe while swift test
wrote to it): a run that failed then may print no line of the test that failed. The xUnit files are
written by swift test itself, whole. Usage: scripts/failed-tests.py FILE... (a missing file is said)."""
import sys
import xml.etree.ElementTree as ET

found = 0
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        print(f"failed-tests: {path}: {error}")
        continue
    for case in root.iter("testcase"):
        for failure in list(case.iter("failure")) + list(case.iter("error")):
            found += 1
            message = (failure.get("message") or failure.text or "").strip()
            print(f"FAILED {case.get('classname')}.{case.get('name')}: {message}")
print(f"failed-tests: {found} failure(s) in {', '.join(sys.argv[1:])}")
