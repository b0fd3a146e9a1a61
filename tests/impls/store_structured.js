// A JSON Lines implementation in JavaScript (node): store_structured on a structured u#, done the
// straightforward way; every other instruction is answered "unsupported".
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const LETTERS = "xyzw";
function component(op, state) {
  const m = /^(r\d+)\.([xyzw])$/.exec(op) || /^l\((\d+)\)$/.exec(op);
  return m.length === 3 ? state[m[1]][LETTERS.indexOf(m[2])] : Number(m[1]);
}
lines.on("line", (line) => {
  const req = JSON.parse(line);
  const ins = req.program[req.program.length - 1];
  const m = /^store_structured (u\d+)\.([xyzw]+), (\S+), (\S+), (r\d+)\.([xyzw]{4})$/.exec(ins);
  if (!m || req.target !== "cs_5_0") {
    console.log(JSON.stringify({ id: req.id, unsupported: "only store_structured u# on cs_5_0" }));
    return;
  }
  const [, uav, mask, indexOp, offsetOp, src, swizzle] = m;
  const state = req.state, res = state[uav];
  const index = component(indexOp.replace(/,$/, ""), state);
  const offset = component(offsetOp.replace(/,$/, ""), state);
  if (offset % 4 === 0 && offset + 4 * mask.length <= res.stride && index < res.count) {
    for (let k = 0; k < mask.length; k++) {
      const value = state[src][LETTERS.indexOf(swizzle[k])];
      res.data[(index * res.stride + offset) / 4 + k] = value;
    }
  }
  console.log(JSON.stringify({ id: req.id, state }));
});
