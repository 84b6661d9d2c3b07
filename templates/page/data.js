// The page data (the plate-data JSON the build writes), the presets and the form's elements.
import { replica_counts } from "./model.js";

export const data = JSON.parse(document.getElementById("plate-data").textContent);
export const KEYS = data.keys;
export const P = data.presets;
export const form = document.getElementById("controls");
export const readout = document.getElementById("readout");
export const CLUSTER_KEYS = data.cluster_keys; // the real cluster's own controls: in the URL only when not DDP's defaults
export const ALL = [...KEYS, ...CLUSTER_KEYS];
export const selects = Object.fromEntries(ALL.map((k) => [k, document.getElementById(`choose-${k}`)]));
export const REPLICAS = replica_counts(P.workshop.max_replicas);

export const OWN = data.own;
