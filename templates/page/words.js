// A plate's words in the page: its PAGE's readout, title, describe and table_rows, compiled from its Python at build
// time (generator/page/compiler.py); the build runs the same Python for the page as built. A plate's page/words.js replaces
// this module.
import { page_describe, page_readout, page_table_rows, page_title } from "./py.page.js";

export const readoutParagraphs = (f, W) => page_readout(f, W);
export const title = (f, figureId, W) => page_title(f, figureId, W);
export const describe = (f, figureId, W) => page_describe(f, figureId, W);
export const tableRows = (f, figureId) => page_table_rows(f, figureId);
