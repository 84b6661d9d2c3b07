// Parse Vega specs into the dataflows vega-view runs, at build time: the page then needs no vega-parser.
// stdin: {figure id: Vega spec}; stdout: {"dataflows": {id: dataflow}, "needs": {"operators": [names used],
// "bindings": whether any figure binds a signal to an input, "schemes", "geo", "formats", "functions", "marks",
// "curves", "scales": see extras(); "expressions": the expressions' functions, see compiled()}}: what bundle.mjs
// must put in the runtime.
// Expressions are compiled here, into JavaScript the runtime bundle carries (the page's CSP forbids eval, so Vega
// cannot make them in the page): an expression in a dataflow keeps only a token naming its function, and an
// encoder's channels go, replaced by the token of the one function Vega's own code generator writes for them.
import {readFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";
import {transforms} from "vega-dataflow";
import {parse} from "vega-parser";
import {TRANSFORMS} from "./transforms.mjs";

for (const [name, [, value]] of Object.entries(TRANSFORMS)) transforms[name] = value;

// vega-runtime's code generator for encoders (its package exports only the built bundle, which keeps it private).
const here = dirname(fileURLToPath(import.meta.url));
const {default: codegen} = await import(pathToFileURL(join(here, "node_modules", "vega-runtime", "src", "expression.js")));

// Each distinct function's source → its token, in the order first met: the same specs give the same tokens.
const tokens = new Map();
const token = (source) => {
  if (!tokens.has(source)) tokens.set(source, `#${tokens.size}`);
  return tokens.get(source);
};

// One signature for every expression outside an encoder: an operator's update takes (_), a parameter (datum, _),
// an event filter (event) and a handler (_, event) with datum read off the event's item; bundle.mjs calls it so.
// The body is what vega-runtime's expression() makes of the code.
const expressionSource = (code) => `function(_,datum,event){${code.endsWith(";") ? code : `return(${code});`}}`;

/** The dataflow with each expression replaced by {code: its function's token} (the other keys kept), and each
 * encoder ({marktype, channels}) by {code: the token of vega-runtime's encoder function for it}. */
function compiled(node) {
  if (Array.isArray(node)) return node.map(compiled);
  if (node === null || typeof node !== "object") return node;
  if (typeof node.code === "string" && "ast" in node) {
    const {code, ast, ...rest} = node;
    return {...compiled(rest), code: token(expressionSource(code))};
  }
  if ("marktype" in node && node.channels && typeof node.channels === "object") {
    const {marktype, channels, ...rest} = node;
    return {...compiled(rest), code: token(String(codegen.encode(null, {marktype, channels})))};
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, compiled(value)]));
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
  let parsed;
  try {
    parsed = parse(spec, null, {ast: true});
  } catch (error) {
    process.stderr.write(`figure '${id}': ${error.message}\n`);
    process.exit(3);
  }
  collect(parsed, used);
  extras(parsed, found);
  dataflows[id] = compiled(parsed);
  bindings ||= parsed.bindings?.length > 0;
}
// The functions of Vega's function table the compiled code calls (this.name): named in the ASTs already, but for
// those the code generator adds itself (the scales' __bandwidth, which bundle.mjs registers).
const sources = [...tokens.keys()];
if (found.functions !== true) {
  for (const source of sources) for (const [, name] of source.matchAll(/\bthis\.(\w+)/g)) found.functions.add(name);
}
const expressions = `{${sources.map((source) => `${JSON.stringify(tokens.get(source))}:${source}`).join(",\n")}}`;
used.delete("operator"); // the plain operator vega-runtime makes itself, not a registered transform
const listed = (set) => set === true ? true : [...set].sort();
found.formats ||= used.has("load");
process.stdout.write(JSON.stringify({dataflows, needs: {operators: [...used].sort(), bindings,
                                                        schemes: listed(found.schemes), geo: found.geo,
                                                        formats: found.formats, functions: listed(found.functions),
                                                        marks: listed(found.marks), curves: listed(found.curves),
                                                        scales: listed(found.scales), expressions}}));
