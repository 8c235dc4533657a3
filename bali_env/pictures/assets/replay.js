// The HTML replay's player (bali replay --html): draws the frame of a step from the page's own data
// (groups of SVG elements stored once), steps with buttons, a slider, the arrow keys and autoplay,
// and keeps the move log and the announcements in step. It reads nothing but the page.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const last = data.frames.length - 1;
  const stage = document.getElementById("stage");
  const slider = document.getElementById("slider");
  const counter = document.getElementById("counter");
  const announce = document.getElementById("announce");
  const scoring = document.getElementById("scoring");
  const playButton = document.getElementById("play");
  const speed = document.getElementById("speed");
  const logItems = new Map();
  let step = 0;
  let timer = null;

  function svgOf(i) {
    const parts = [];
    for (const g of data.frames[i]) for (const e of data.groups[g]) parts.push(data.elements[e]);
    return data.open + parts.join("") + "</svg>";
  }

  function show(i) {
    step = Math.max(0, Math.min(last, i));
    stage.innerHTML = svgOf(step);
    slider.value = String(step);
    counter.textContent = step === 0 ? "start of the game" : "move " + step + " of " + last;
    const entry = data.log[step - 1];
    const lines = [];
    if (entry && entry.events.length) lines.push(...entry.events);
    if (step === last && data.result) lines.push(data.result);
    announce.textContent = lines.join("  \u00b7  ");
    scoring.textContent = data.scoring || "";
    scoring.hidden = step !== last || !data.scoring;
    for (const [k, button] of logItems) button.classList.toggle("current", k === step);
    const current = logItems.get(step);
    if (current) current.scrollIntoView({ block: "nearest" });
    if (step === last) stop();
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.textContent = "\u25b6 play";
    playButton.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (timer !== null) { stop(); return; }
    if (step === last) show(0);
    timer = setInterval(() => show(step + 1), 1000 / Number(speed.value));
    playButton.textContent = "\u2016 pause";
    playButton.setAttribute("aria-pressed", "true");
  }

  function buildLog() {
    const list = document.getElementById("log");
    let turn = null;
    data.log.forEach((entry, k) => {
      if (entry.turn !== turn) {
        turn = entry.turn;
        const head = document.createElement("li");
        head.className = "turn";
        head.textContent = "Turn " + entry.turn + ": " + entry.active;
        list.appendChild(head);
      }
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = (k + 1) + ". " + entry.text;
      for (const event of entry.events) {
        const span = document.createElement("span");
        span.className = "event";
        span.textContent = event;
        button.appendChild(span);
      }
      button.addEventListener("click", () => { stop(); show(k + 1); });
      item.appendChild(button);
      list.appendChild(item);
      logItems.set(k + 1, button);
    });
    if (data.result) {
      const end = document.createElement("li");
      end.className = "result";
      end.textContent = data.result;
      list.appendChild(end);
    }
  }

  slider.max = String(last);
  slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
  document.getElementById("first").addEventListener("click", () => { stop(); show(0); });
  document.getElementById("prev").addEventListener("click", () => { stop(); show(step - 1); });
  document.getElementById("next").addEventListener("click", () => { stop(); show(step + 1); });
  document.getElementById("last").addEventListener("click", () => { stop(); show(last); });
  playButton.addEventListener("click", play);
  speed.addEventListener("change", () => { if (timer !== null) { stop(); play(); } });
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLSelectElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const keys = { ArrowRight: () => show(step + 1), ArrowLeft: () => show(step - 1), Home: () => show(0),
                   End: () => show(last) };
    if (ev.key in keys) { ev.preventDefault(); stop(); keys[ev.key](); }
    else if (ev.key === " " && !(ev.target instanceof HTMLButtonElement)) { ev.preventDefault(); play(); }
  });
  buildLog();
  show(0);
})();
