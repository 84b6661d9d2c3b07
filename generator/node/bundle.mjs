// Bundle the page's Vega runtime with esbuild: vega-view, the expressions' functions compiled by parse.mjs, and only
// the operators named on stdin (JSON, parse.mjs's "needs": {"operators": [...], "bindings": bool, "expressions": the
// functions' source, ...: what `trimmed` below leaves out}), registered into vega-dataflow's registry. Vega's
// packages are resolved to their ES sources and marked free of side effects, so esbuild leaves out what the page
// never reaches (the parser, the unused transforms, most of d3). stdout: the minified script, which defines
// window.vegaRuntime(): called once, it sets window.vega = {View, transforms} and window.vegaExpressions.
import {existsSync, readFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";
import * as esbuild from "esbuild";
import {TRANSFORMS} from "./transforms.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const needs = JSON.parse(readFileSync(0, "utf8"));
const names = needs.operators;
const missing = names.filter((name) => !(name in TRANSFORMS));
if (missing.length) {
  process.stderr.write(`no Vega package provides transform(s) ${missing.join(", ")}\n`);
  process.exit(3);
}
const lines = [
  'import {View} from "vega-view";',
  'import {transforms} from "vega-dataflow";',
  'import {functionContext} from "vega-functions";',
  `import {internalScaleFunctions} from ${JSON.stringify(join(here, "node_modules", "vega-functions", "src", "scales.js"))};`,
];
const entries = names.map((name, i) => {
  lines.push(`import {${name} as T${i}} from "${TRANSFORMS[name][0]}";`);
  return `${JSON.stringify(name)}: T${i}`;
});
lines.push(`Object.assign(transforms, {${entries.join(", ")}});`);
lines.push(expressionsModule(needs.expressions ?? "{}"));
// The registry goes out too: vega-runtime makes an inert operator for a name it lacks, so tests read it to prove
// the bundle holds every operator the dataflows name.
lines.push("window.vega = {View, transforms};", "window.vegaExpressions = expressions;");

// The expressions: the table of functions parse.mjs compiled ({token: function}), and the expression maker vega-view
// takes (its option `expr`, in place of vega-runtime's, which makes them with Function at run time). Each function is
// bound to the view's function table, as vega-runtime binds those it makes; parse.mjs gave every expression outside
// an encoder one signature, (_, datum, event). The code generator calls the scales' __bandwidth on that table, and
// adds it to the table only when it is made (never, in the page): internalScaleFunctions adds it here.
function expressionsModule(table) {
  return `internalScaleFunctions(String, functionContext, {});
const compiled = ${table};
function compiledFunction(code) {
  const made = compiled[code];
  if (!made) throw Error("the Vega runtime holds no compiled expression " + code + ": it was bundled for other dataflows");
  return made;
}
const expressions = {
  operator: (ctx, expr) => compiledFunction(expr.code).bind(ctx.functions),
  parameter: (ctx, expr) => { const f = compiledFunction(expr.code), fn = ctx.functions; return (datum, _) => f.call(fn, _, datum); },
  event: (ctx, expr) => { const f = compiledFunction(expr.code), fn = ctx.functions; return (event) => f.call(fn, undefined, undefined, event); },
  handler: (ctx, expr) => {
    const f = compiledFunction(expr.code), fn = ctx.functions;
    return (_, event) => f.call(fn, _, event.item && event.item.datum, event);
  },
  encode: (ctx, encode) => compiledFunction(encode.code).bind(ctx.functions),
};`;
}

// A package's own ES sources (index.browser.js where it has one: vega-loader and vega-canvas would pull in node's
// fs and canvas otherwise), each file marked side-effect free: Vega registers what the page needs through the
// imports above, never through a module's mere loading.
const sources = {
  name: "vega-sources",
  setup(build) {
    build.onResolve({filter: /.*/}, async (args) => {
      if (args.pluginData || args.kind === "entry-point") return undefined;
      let path;
      if (/^(vega|d3)-[a-z-]+$/.test(args.path)) {
        const dir = join(here, "node_modules", args.path);
        path = [join(dir, "index.browser.js"), join(dir, "index.js")].find(existsSync);
      }
      if (!path) {
        const found = await build.resolve(args.path, {resolveDir: args.resolveDir, kind: args.kind, pluginData: 1});
        if (found.errors.length) return {errors: found.errors};
        path = found.path;
      }
      return {path, sideEffects: /node_modules[\\/](vega|d3)-/.test(path) ? false : undefined};
    });
  },
};

// The page draws with the SVG renderer into the document, and nothing else: vega-scenegraph's table of renderers is
// replaced by one holding only that, so the canvas, hybrid and SVG-string renderers are left out. The table keeps
// its exports: asking for another renderer fails loudly, as for any name Vega does not know.
const MODULES = `import SVGHandler from './SVGHandler.js';
import SVGRenderer from './SVGRenderer.js';
export const RenderType = {SVG: 'svg', None: 'none'};
const modules = {svg: {renderer: SVGRenderer, handler: SVGHandler}, none: {}};
export function renderModule(name, _) {
  name = String(name || '').toLowerCase();
  if (arguments.length > 1) { modules[name] = _; return this; }
  return modules[name];
}
`;
// Signal bindings (inputs Vega makes for a spec's "bind") are left out when no figure has one; a view that asks
// for one anyway fails loudly.
const NO_BIND = `export default function bind() {
  throw Error("this Vega runtime was bundled without signal bindings: no figure had one at build time");
}
`;
// vega-transforms' fold made new tuples from every source tuple at every pulse, so a change of values (the page hands
// its rows over as modifications) removed every folded tuple and added new ones: every mark drawn from them, and
// its SVG element, was made anew. When the source only changed values, under the same fields, each source tuple
// keeps its folded tuples, given the new values as modifications (the tuples and values of folding anew, so the
// same marks). The patch names the exact lines it replaces and fails the bundle when Fold.js no longer has them.
const FOLD_ANEW = `    out.rem = this.value;

    pulse.visit(pulse.SOURCE, t => {
      for (let i=0, d; i<n; ++i) {
        d = derive(t);
        d[k] = fnames[i];
        d[v] = fields[i](t);
        out.add.push(d);
      }
    });

    this.value = out.source = out.add;
    return out.modifies(as);`;
const FOLD_KEPT = `    const kept = this._kept;
    if (kept && !_.modified() && !pulse.changed(pulse.ADD_REM)) {
      pulse.visit(pulse.MOD, t => {
        const folded = kept.get(t);
        for (let i=0; i<n; ++i) {
          const d = rederive(t, folded[i]);
          d[k] = fnames[i];
          d[v] = fields[i](t);
          out.mod.push(d);
        }
      });
      out.source = this.value;
      return out.modifies(as);
    }

    out.rem = this.value;
    this._kept = new Map();

    pulse.visit(pulse.SOURCE, t => {
      const folded = [];
      for (let i=0, d; i<n; ++i) {
        d = derive(t);
        d[k] = fnames[i];
        d[v] = fields[i](t);
        out.add.push(d);
        folded.push(d);
      }
      this._kept.set(t, folded);
    });

    this.value = out.source = out.add;
    return out.modifies(as);`;

// Colour schemes: only those the scales name (vega-scale's table holds about 80, 4.5 kB gzip); a scheme a
// signal picks keeps them all. A name left out is an unknown scheme, which Vega reports as for any other.
async function palettes(path) {
  if (needs.schemes === true || needs.schemes === undefined) return undefined;
  const {continuous, discrete} = await import(path);
  const pick = (table) => JSON.stringify(Object.fromEntries(needs.schemes.filter((name) => name in table)
    .map((name) => [name, table[name]])));
  return {contents: `export const continuous = ${pick(continuous)};\nexport const discrete = ${pick(discrete)};\n`,
          loader: "js"};
}
// The geo functions of expressions (geoArea, geoBounds, geoCentroid without a projection: d3-geo) and the data
// formats besides JSON (CSV, TSV, DSV, TopoJSON) only when a figure uses them; asked for anyway, they fail loudly.
const NO_GEO = `const missing = () => { throw Error("this Vega runtime was bundled without geo functions: no figure had one"); };
export const geoArea = missing, geoBounds = missing, geoCentroid = missing, geoScale = missing;
`;
const JSON_ONLY = `import json from './json.js';
import {hasOwnProperty} from 'vega-util';
export const format = {json};
export function formats(name, reader) {
  if (arguments.length > 1) { format[name] = reader; return this; }
  return hasOwnProperty(format, name) ? format[name] : null;
}
export function responseType(type) {
  const f = formats(type);
  return f && f.responseType || 'text';
}
`;

// Expression functions: vega-functions' table holds about 120 (the selection, lasso, statistics, time, colour and
// tree functions, with the code generator only the parser uses, about 9 kB gzip); the page keeps those its
// expressions call (the compiled code calls this.name for each; parse.mjs lists them). A name left out can only be
// one no expression calls. The patch names the exact lines it replaces and fails the bundle when codegen.js no
// longer has them.
const CONTEXT_START = "export const functionContext = {\n";
const GENERATOR = "export const codeGenerator = codegenExpression(codegenParams);";
function functionTable(source) {
  const start = source.indexOf(CONTEXT_START), end = source.indexOf("\n};\n", start);
  const registered = /^expressionFunction\('(\w+)', .*\);$/gm;
  if (start < 0 || end < 0 || !source.includes(GENERATOR) || !registered.test(source)) return null;
  const keep = new Set(needs.functions);
  const entries = source.slice(start + CONTEXT_START.length, end).split("\n");
  const named = entries.map((line) => [line, (line.match(/^  (\w+)\b/) || [])[1]]);
  if (named.some(([, name]) => !name)) return null; // an entry of more than one line: not the table we know
  const kept = named.filter(([, name]) => keep.has(name)).map(([line]) => line.replace(/,?( *\/\/.*)?$/, ",$1"));
  return source.slice(0, start) + CONTEXT_START + kept.join("\n") + source.slice(end)
    // the code generator ran at build time (parse.mjs): the page never needs it
    .replace(GENERATOR, "export const codeGenerator = null;")
    .replace(registered, (line, name) => keep.has(name) ? line : "");
}
// Mark types: vega-scenegraph's table holds all twelve (arc and area bring d3-shape's arc and area); the page keeps
// those its dataflows draw, and group, the scene's root. The shapes' makers are then marked pure, so esbuild drops
// those no kept mark calls.
function markTable(source) {
  const keep = new Set(["group", ...needs.marks]);
  const imports = /^import (\w+) from '\.\/\w+\.js';\n/gm, entries = /^  (\w+): +\w+,?\n/gm;
  if ((source.match(imports) || []).length !== 12 || (source.match(entries) || []).length !== 12) return null;
  return source.replace(imports, (line, name) => keep.has(name) ? line : "")
    .replace(entries, (line, name) => keep.has(name) ? line : "");
}
const SHAPES = /^(const +| {6})(\w+Shape += +)(?=\w)/gm;
function pureShapes(source) {
  if ((source.match(SHAPES) || []).length !== 7) return null;
  return source.replace(SHAPES, "$1$2/* @__PURE__ */ ");
}
// Curves: vega-scenegraph's table names seventeen of d3-shape's; the page keeps linear (what a line or area
// without "interpolate" takes) and those the dataflows name.
function curveTable(source) {
  const keep = new Set(["linear", ...needs.curves]);
  const entries = /^  '([a-z-]+)': \{\n[^}]*\n  \},?\n/gm;
  if ((source.match(entries) || []).length !== 17) return null;
  return source.replace(entries, (entry, name) => keep.has(name) ? entry : "");
}
// Scale types: vega-scale registers twenty-six (time and UTC bring d3-time's intervals, the sequential and
// diverging ones d3's interpolating scales); the page keeps linear (a scale without a type) and those the dataflows
// name. vega-encode reads a continuous scale with a scheme or a range of colours as its sequential or diverging
// kind, which only the data decides, so both are kept with each continuous type.
const REGISTERED = /^scale\((\w+|`\$\{(\w+)\}-\$\{(\w+)\}`), .*\);.*\n/gm;
async function scaleTable(path) {
  const source = readFileSync(path, "utf8");
  const types = await import(join(dirname(path), "scales", "types.js"));
  const keep = new Set(["linear", ...needs.scales]);
  for (const type of [...keep]) {
    if ([types.Linear, types.Log, types.Pow, types.Sqrt, types.Symlog].includes(type)) {
      keep.add(`${types.Sequential}-${type}`).add(`${types.Diverging}-${type}`);
    }
    if (type === types.Sequential) keep.add(`${types.Sequential}-${types.Linear}`);
  }
  const key = (name, a, b) => a ? `${types[a]}-${types[b]}` : types[name];
  const lines = [...source.matchAll(REGISTERED)];
  if (lines.length !== 26 || lines.some(([, name, a, b]) => typeof key(name, a, b) !== "string")) {
    return {errors: [{text: "vega-scale's scales.js no longer has the lines bundle.mjs replaces"}]};
  }
  return {contents: source.replace(REGISTERED, (line, name, a, b) => keep.has(key(name, a, b)) ? line : ""),
          loader: "js"};
}
// A patch whose lines are not there: the bundle fails, naming the file.
function patched(make, what) {
  return (args) => {
    const contents = make(readFileSync(args.path, "utf8"));
    return contents === null ? {errors: [{text: `${what} no longer has the lines bundle.mjs replaces`}]}
      : {contents, loader: "js"};
  };
}

const trimmed = {
  name: "trimmed",
  setup(build) {
    build.onLoad({filter: /vega-transforms[\\/]src[\\/]Fold\.js$/}, (args) => {
      const source = readFileSync(args.path, "utf8");
      const imports = "import {Transform, derive} from 'vega-dataflow';";
      if (!source.includes(FOLD_ANEW) || !source.includes(imports)) {
        return {errors: [{text: "vega-transforms' Fold.js no longer has the lines bundle.mjs replaces"}]};
      }
      return {contents: source.replace(imports, "import {Transform, derive, rederive} from 'vega-dataflow';")
        .replace(FOLD_ANEW, FOLD_KEPT), loader: "js"};
    });
    build.onLoad({filter: /vega-scenegraph[\\/]src[\\/]modules\.js$/}, () => ({contents: MODULES, loader: "js"}));
    build.onLoad({filter: /vega-scale[\\/]src[\\/]palettes\.js$/}, (args) => palettes(args.path));
    if (needs.geo === false) {
      build.onLoad({filter: /vega-functions[\\/]src[\\/]functions[\\/]geo\.js$/}, () => ({contents: NO_GEO, loader: "js"}));
    }
    if (needs.formats === false) {
      build.onLoad({filter: /vega-loader[\\/]src[\\/]formats[\\/]index\.js$/}, () => ({contents: JSON_ONLY, loader: "js"}));
    }
    if (Array.isArray(needs.functions)) {
      build.onLoad({filter: /vega-functions[\\/]src[\\/]codegen\.js$/},
                   patched(functionTable, "vega-functions' codegen.js"));
    }
    if (Array.isArray(needs.marks)) {
      build.onLoad({filter: /vega-scenegraph[\\/]src[\\/]marks[\\/]index\.js$/},
                   patched(markTable, "vega-scenegraph's marks/index.js"));
      build.onLoad({filter: /vega-scenegraph[\\/]src[\\/]path[\\/]shapes\.js$/},
                   patched(pureShapes, "vega-scenegraph's path/shapes.js"));
    }
    if (Array.isArray(needs.curves)) {
      build.onLoad({filter: /vega-scenegraph[\\/]src[\\/]path[\\/]curves\.js$/},
                   patched(curveTable, "vega-scenegraph's path/curves.js"));
    }
    if (Array.isArray(needs.scales)) {
      build.onLoad({filter: /vega-scale[\\/]src[\\/]scales\.js$/}, (args) => scaleTable(args.path));
    }
    if (!needs.bindings) {
      build.onLoad({filter: /vega-view[\\/]src[\\/]bind\.js$/}, () => ({contents: NO_BIND, loader: "js"}));
    }
  },
};

const result = await esbuild.build({
  stdin: {contents: lines.join("\n"), resolveDir: here, sourcefile: "runtime-entry.js"},
  bundle: true, minify: true, format: "esm", target: "es2020", write: false, legalComments: "none",
  plugins: [sources, trimmed], logLevel: "silent",
});
// One function, run when the first view is made (the page carries this script inert until then, and runs it as a
// classic script, hence "use strict": esbuild's ES module output assumes strict code): the modules' top-level
// work waits until a figure goes live.
process.stdout.write(`window.vegaRuntime=function(){"use strict";${result.outputFiles[0].text.trim()}};\n`);
