// The page data (the plate-data JSON the build writes), the presets and the form's elements.
export const data = JSON.parse(document.getElementById("plate-data").textContent);
export const KEYS = data.keys;
export const P = data.presets;
export const form = document.getElementById("controls");
export const readout = document.getElementById("readout");
export const CLUSTER_KEYS = data.cluster_keys; // controls written to the URL only when not the default's
export const ALL = [...KEYS, ...CLUSTER_KEYS];
export const selects = Object.fromEntries(ALL.map((k) => [k, document.getElementById(`choose-${k}`)]));
