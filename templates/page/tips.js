// Glossary definitions beside their terms.

/** Glossary definitions beside their terms: on hover, on keyboard focus, and on a first tap. */
export function termTips() {
  const tip = document.createElement("div");
  tip.className = "term-tip";
  tip.hidden = true;
  tip.setAttribute("aria-hidden", "true"); // screen readers get the definition from aria-describedby
  document.body.append(tip);
  let owner = null;
  let closing = 0;
  let tapOpened = false;
  const open = (link) => {
    clearTimeout(closing);
    const definition = document.getElementById(link.getAttribute("aria-describedby"));
    if (!definition) return;
    owner = link;
    tip.textContent = definition.textContent;
    tip.hidden = false;
    const page = document.documentElement.clientWidth;
    const box = link.getBoundingClientRect();
    const width = Math.min(320, page - 16);
    tip.style.width = `${width}px`;
    tip.style.left = `${Math.max(8, Math.min(box.left, page - width - 8)) + window.scrollX}px`;
    tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  };
  const close = () => { tip.hidden = true; owner = null; };
  const closeSoon = () => { closing = setTimeout(close, 300); };
  for (const link of document.querySelectorAll("a.term[aria-describedby]")) {
    link.addEventListener("mouseenter", () => open(link));
    link.addEventListener("mouseleave", closeSoon);
    link.addEventListener("focus", () => open(link));
    link.addEventListener("blur", closeSoon);
    link.addEventListener("pointerdown", (e) => { tapOpened = e.pointerType === "touch" && owner !== link; });
    link.addEventListener("click", (e) => {
      if (tapOpened) { e.preventDefault(); open(link); } // a second tap follows the link to the glossary
      tapOpened = false;
    });
  }
  tip.addEventListener("mouseenter", () => clearTimeout(closing));
  tip.addEventListener("mouseleave", closeSoon);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && owner) close(); });
}
