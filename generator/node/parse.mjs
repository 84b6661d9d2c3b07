// Parse Vega specs into the dataflows vega-view runs, at build time: the page then needs no vega-parser.
// stdin: {figure id: Vega spec}; stdout: {"dataflows": {id: dataflow}, "needs": {"operators": [names used],
// "bindings": whether any figure binds a signal to an input, "schemes", "geo", "formats", "functions", "marks",
// "curves", "scales": see extras()}}: what bundle.mjs must put in the runtime.
// Expressions come as ASTs for vega-interpreter (the page's CSP forbids eval). The interpreter never reads their
// generated code, but vega-runtime memoises expression functions by it, so each distinct code becomes a short
// token (an encoder's channels are not memoised: theirs goes). What the interpreter never reads is dropped: a literal's raw text, a property's type and kind, and a
// member expression's computed flag when false (it reads a missing flag as false).
import {readFileSync} from "node:fs";
import {transforms} from "vega-dataflow";
import {parse} from "vega-parser";
import {TRANSFORMS} from "./transforms.mjs";

for (const [name, [, value]] of Object.entries(TRANSFORMS)) transforms[name] = value;

const tokens = new Map();

function slim(node, channel = false) {
  if (Array.isArray(node)) return node.map((item) => slim(item));
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "raw" && node.type === "Literal") continue;
    if ((key === "type" || key === "kind") && node.type === "Property") continue;
    if (key === "computed" && value === false && node.type === "MemberExpression") continue;
    if (key === "code" && "ast" in node && channel) continue; // an encoder's channel: no memo reads it
    if (key === "code" && "ast" in node && typeof value === "string") {
      if (!tokens.has(value)) tokens.set(value, `#${tokens.size}`);
      out.code = tokens.get(value);
    } else if (key === "channels" && value && typeof value === "object" && !Array.isArray(value)) {
      out.channels = Object.fromEntries(Object.entries(value).map(([name, c]) => [name, slim(c, true)]));
    } else out[key] = slim(value);
  }
  return out;
}

function collect(node, used) {
  if (Array.isArray(node)) { for (const item of node) collect(item, used); return; }
  if (node === null || typeof node !== "object") return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "operators" && Array.isArray(value)) {
      for (const op of value) if (op && typeof op.type === "string") used.add(op.type.toLowerCase());
    }
    collect(value, used);
  }
}

// What else the runtime must carry: the colour schemes scales name (true: one a signal chooses, so every one) and
// the geo functions an expression calls; data formats besides JSON only for data read from a URL at run time (a
// "$request", or a "load" operator): values written in the spec are read here, at parse time. Also the expression
// functions called (by the name the interpreter looks up, without the parser's leading "_"), the mark types drawn,
// the curves lines and areas take ("interpolate") and the scale types (true when one is not a literal, so every one:
// Vega's parser takes no signal for a scale's type, but a curve may be one).
function extras(node, found) {
  if (Array.isArray(node)) { for (const item of node) extras(item, found); return; }
  if (node === null || typeof node !== "object") return;
  if (node.type === "CallExpression") {
    const name = node.callee?.type === "Identifier" ? node.callee.name : null;
    if (/^geo/.test(name ?? "")) found.geo = true;
    if (name === null) found.functions = true;
    else if (found.functions !== true) found.functions.add(name.replace(/^_/, ""));
  }
  if ("$request" in node) found.formats = true; // data read from a URL at run time, in its format
  if ("marktype" in node && found.marks !== true) {
    if (typeof node.marktype === "string") found.marks.add(node.marktype);
    else found.marks = true;
  }
  if (node.type === "scale" && node.params && found.scales !== true) {
    const type = node.params.type ?? "linear"; // vega-encode's default
    if (typeof type === "string") found.scales.add(type.toLowerCase());
    else found.scales = true;
  }
  const curve = node.channels?.interpolate;
  if (curve !== undefined && found.curves !== true) {
    if (curve?.ast?.type === "Literal" && typeof curve.ast.value === "string") found.curves.add(curve.ast.value);
    else found.curves = true;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "scheme" && found.schemes !== true) {
      if (typeof value === "string") found.schemes.add(value.toLowerCase());
      else if (value !== undefined && value !== null) found.schemes = true;
    }
    extras(value, found);
  }
}

const specs = JSON.parse(readFileSync(0, "utf8"));
const found = {schemes: new Set(), geo: false, formats: false, functions: new Set(), marks: new Set(), curves: new Set(),
               scales: new Set()};
const dataflows = {}, used = new Set();
let bindings = false;
for (const [id, spec] of Object.entries(specs)) {
  try {
    dataflows[id] = slim(parse(spec, null, {ast: true}));
  } catch (error) {
    process.stderr.write(`figure '${id}': ${error.message}\n`);
    process.exit(3);
  }
  collect(dataflows[id], used);
  extras(dataflows[id], found);
  bindings ||= dataflows[id].bindings?.length > 0;
}
used.delete("operator"); // the plain operator vega-runtime makes itself, not a registered transform
const listed = (set) => set === true ? true : [...set].sort();
found.formats ||= used.has("load");
process.stdout.write(JSON.stringify({dataflows, needs: {operators: [...used].sort(), bindings,
                                                        schemes: listed(found.schemes), geo: found.geo,
                                                        formats: found.formats, functions: listed(found.functions),
                                                        marks: listed(found.marks), curves: listed(found.curves),
                                                        scales: listed(found.scales)}}));
