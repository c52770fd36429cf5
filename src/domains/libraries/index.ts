/** The libraries domain's face: the CLI's `libraries import`. */
export { importLibraries } from "./library-import.js";
