// A JSON Lines implementation in JavaScript (node): store_structured on a structured u#, done the
// straightforward way; every other instruction or operand form is answered "unsupported".
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const LETTERS = "xyzw";
function component(op, state) {  // a selected register component or an immediate, else null
  let m = /^(r\d+)\.([xyzw])$/.exec(op);
  if (m) return state[m[1]][LETTERS.indexOf(m[2])];
  m = /^l\(([0-9a-fx]+)\)$/i.exec(op);
  return m ? Number(m[1]) : null;
}
function answer(req) {
  const ins = req.program[req.program.length - 1];
  const m = /^store_structured (u\d+)\.([xyzw]+), (\S+), (\S+), (r\d+)\.([xyzw]{4})$/.exec(ins);
  if (!m || req.target !== "cs_5_0") return { unsupported: "only store_structured u# on cs_5_0" };
  const [, uav, mask, indexOp, offsetOp, src, swizzle] = m;
  const state = req.state, res = state[uav];
  const index = component(indexOp.replace(/,$/, ""), state);
  const offset = component(offsetOp.replace(/,$/, ""), state);
  if (index === null || offset === null) return { unsupported: "operand form" };
  if (offset % 4 === 0 && offset + 4 * mask.length <= res.stride && index < res.count) {
    for (let k = 0; k < mask.length; k++) {
      res.data[(index * res.stride + offset) / 4 + k] = state[src][LETTERS.indexOf(swizzle[k])];
    }
  }
  return { state };
}
lines.on("line", (line) => {
  const req = JSON.parse(line);
  console.log(JSON.stringify({ id: req.id, ...answer(req) }));
});
