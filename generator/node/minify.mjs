// Minify the page's own script or style with esbuild. argv[2]: "js" (an ES module: its top-level names are
// private, so they may be shortened) or "css"; stdin: the text; stdout: the same program, smaller.
import {readFileSync} from "node:fs";
import * as esbuild from "esbuild";

const loader = process.argv[2];
try {
  const result = await esbuild.transform(readFileSync(0, "utf8"), {
    loader, minify: true, legalComments: "none", ...(loader === "js" ? {format: "esm", target: "es2020"} : {}),
  });
  process.stdout.write(result.code);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
