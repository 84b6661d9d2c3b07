// The reader's own values beside the choices: none in this plate yet.
export const ownCheck = () => null;
export const ownSliderShown = () => {};
export const ownSelection = (sel) => sel;
export const ownFromUrl = (sel) => sel;
export const ownUrlEntries = () => [];
