// Bundle the page's own script with esbuild. stdin: JSON {entry, modules: {file name: text}}, the ES modules of
// templates/page/, which import one another as "./name.js"; nothing is read from disk. stdout: one ES module,
// minified (its top-level names are private, so they may be shortened).
import {readFileSync} from "node:fs";
import * as esbuild from "esbuild";

const {entry, modules} = JSON.parse(readFileSync(0, "utf8"));
const own = {
  name: "page-modules",
  setup(build) {
    build.onResolve({filter: /.*/}, (args) => {
      const name = args.path.replace(/^\.\//, "");
      if (!Object.hasOwn(modules, name)) {
        return {errors: [{text: `${args.importer || "the entry"} imports ${args.path}, which is not in templates/page/`}]};
      }
      return {path: name, namespace: "page"};
    });
    build.onLoad({filter: /.*/, namespace: "page"}, (args) => ({contents: modules[args.path], loader: "js"}));
  },
};
try {
  const result = await esbuild.build({
    entryPoints: [entry], bundle: true, write: false, format: "esm", target: "es2020", minify: true,
    legalComments: "none", plugins: [own], logLevel: "silent",
  });
  process.stdout.write(result.outputFiles[0].text);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
