// Copy the browser builds of the front-end libraries into the package's static
// directory, so that the server serves every asset itself (labs are often offline).
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const server = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(server, "xaclab_server", "static", "vendor");
const files = [
  ["node_modules/uplot/dist/uPlot.iife.min.js", "uPlot.iife.min.js"],
  ["node_modules/uplot/dist/uPlot.min.css", "uPlot.min.css"],
  ["node_modules/uplot/LICENSE", "uPlot.LICENSE"],
];
mkdirSync(target, { recursive: true });
for (const [from, to] of files) {
  copyFileSync(join(server, from), join(target, to));
  console.log(`vendored ${from} -> xaclab_server/static/vendor/${to}`);
}
