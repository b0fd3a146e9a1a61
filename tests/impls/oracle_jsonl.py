"""A JSON Lines implementation in plain Python: the oracle behind the subprocess protocol.

Usage: python oracle_jsonl.py [MODE TRIGGER]. Without arguments it answers every request as the
oracle does. With MODE and TRIGGER it misbehaves on requests whose id contains TRIGGER (and
answers the others correctly), to show that the conformance run survives it:
crash (exit code 3 after a message on stderr), segfault, hang, garbage (a line that is not JSON),
wrong-id (answers another id), chatty (an extra line after the reply), flood (100 MB on stderr,
then a correct answer), flood-crash (the same, then exit code 3), orphan (forks a grandchild
that holds standard output and error open for an hour, writes its pid to the file named by
$SM5_TEST_PIDFILE, then exits with code 3), out-of-order (answers the previous request's id
first, then this one). A TRIGGER of "/" matches every vector. With ``record FILE`` it answers
every request correctly and appends each request line, as received, to FILE.
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
previous = None
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
        if mode in ("flood", "flood-crash"):
            block = b"warning: " + b"x" * (1 << 16) + b"\n"
            for _ in range(100 * (1 << 20) // len(block)):
                sys.stderr.buffer.write(block)
            sys.stderr.buffer.write(b"the last line of the flood\n")
            sys.stderr.flush()
            if mode == "flood-crash":
                sys.exit(3)
        if mode == "orphan":
            if os.fork() == 0:
                with open(os.environ["SM5_TEST_PIDFILE"], "w") as pidfile:
                    pidfile.write(str(os.getpid()))
                time.sleep(3600)
                os._exit(0)
            time.sleep(0.2)
            os._exit(3)
        if mode == "out-of-order" and previous is not None:
            print(json.dumps({"id": previous, "unsupported": "late"}), flush=True)
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
    previous = request["id"]
    if mode == "chatty" and trigger in request["id"]:
        print(json.dumps({"id": request["id"], "unsupported": "said twice"}), flush=True)
