// The reader's own values beside the presets: none unless a plate's page/own.js (which replaces this module) has
// some. The page script asks it to check, read and write them.
export const ownCheck = () => null;
export const ownFromUrl = (sel) => sel;
export const ownSelection = (base) => base;
export const ownSliderShown = () => {};
export const ownUrlEntries = () => [];
