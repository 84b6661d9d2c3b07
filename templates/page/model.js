// What the page exposes as window.plate.model: nothing of its own; a plate's page/model.js replaces this module.
export const model = {};
