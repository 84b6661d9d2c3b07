// XIV.5 offers no values of the reader's own (XIV.4's custom model, batch and network): the engine's modules ask
// for them (docs/plates.md), so each answer here is "none".
export const ownCheck = () => null;
export const ownFromUrl = (sel) => sel;
export const ownSelection = (base) => base;
export const ownSliderShown = () => {};
export const ownUrlEntries = () => [];
