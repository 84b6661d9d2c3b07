// Every operator Vega 6.2 registers, by the package that exports it: what parse.mjs knows and bundle.mjs can
// import. Like Vega's own entry, every exported class of these packages goes into vega-dataflow's registry under
// its export name (transforms a spec names, such as filter, and the parser's own, such as sieve or datajoin).
import * as crossfilter from "vega-crossfilter";
import * as encode from "vega-encode";
import * as force from "vega-force";
import * as geo from "vega-geo";
import * as hierarchy from "vega-hierarchy";
import * as label from "vega-label";
import * as regression from "vega-regression";
import * as transforms from "vega-transforms";
import * as viewTransforms from "vega-view-transforms";
import * as voronoi from "vega-voronoi";
import * as wordcloud from "vega-wordcloud";

const packages = {
  "vega-crossfilter": crossfilter, "vega-encode": encode, "vega-force": force, "vega-geo": geo,
  "vega-hierarchy": hierarchy, "vega-label": label, "vega-regression": regression, "vega-transforms": transforms,
  "vega-view-transforms": viewTransforms, "vega-voronoi": voronoi, "vega-wordcloud": wordcloud,
};

/** {registered name: [package, class]} for every operator. */
export const TRANSFORMS = {};
for (const [pkg, exports] of Object.entries(packages)) {
  for (const [name, value] of Object.entries(exports)) if (typeof value === "function") TRANSFORMS[name] = [pkg, value];
}
