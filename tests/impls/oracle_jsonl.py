"""A JSON Lines implementation in plain Python: the oracle behind the subprocess protocol.

Usage: python oracle_jsonl.py [MODE TRIGGER]. Without arguments it answers every request as the
oracle does. With MODE and TRIGGER it misbehaves on requests whose id contains TRIGGER (and
answers the others correctly), to show that the conformance run survives it:
crash (exit code 3 after a message on stderr), segfault, hang, garbage (a line that is not JSON),
wrong-id (answers another id), chatty (an extra line after the reply). With ``record FILE`` it
answers every request correctly and appends each request line, as received, to FILE.
"""

import json
import os
import signal
import sys
import time

from sm5.conformance.oracle_impl import OracleImplementation
from sm5.vectors.format import Vector

mode, trigger = (sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else ("", "\0")
oracle = OracleImplementation()
for line in sys.stdin:
    if mode == "record":
        with open(trigger, "a", encoding="utf-8", newline="") as record:
            record.write(line)
    request = json.loads(line)
    if trigger in request["id"]:
        if mode == "crash":
            print("fatal: cannot translate this instruction", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            print("Segmentation fault (core dumped)?", flush=True)
            continue
        if mode == "wrong-id":
            request["id"] += "-other"
    vector = Vector(request["id"], tuple(request["program"]), request["target"],
                    request["runtime"], request["state"], {})
    result = oracle.run(vector)
    answer = result.state if result.status == "state" else result.reason
    print(json.dumps({"id": request["id"], result.status: answer}), flush=True)
    if mode == "chatty" and trigger in request["id"]:
        print(json.dumps({"id": request["id"], "unsupported": "said twice"}), flush=True)
