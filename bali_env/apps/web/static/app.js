// The web app's page (bali serve): a setup form, then the game as the human sees it. The server
// sends the picture, the legal options and the move log; the page asks it to play the bots' moves
// one at a time (POST .../advance) so that they show one after another.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let setup = null;
  let game = null;
  let timer = null;

  async function api(method, url, body) {
    const response = await fetch(url, {
      method, headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await response.json().catch(() => ({ error: "the server's answer is not JSON" }));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function showError(message) {
    $("error").textContent = message;
    $("error").hidden = !message;
  }

  function seatOptions() {
    if (!setup) return; // changed before /api/setup answered: its answer draws the choices
    const players = Number($("players").value);
    const seat = $("seat");
    const keep = Math.min(Number(seat.value || 0), players - 1);
    seat.replaceChildren(...Array.from({ length: players }, (_, q) => new Option("seat " + q + (q === 0 ? " (first)" : ""), q)));
    seat.value = String(keep);
    const box = $("opponents");
    const previous = Array.from(box.querySelectorAll("select")).map((s) => s.value);
    box.querySelectorAll("label").forEach((l) => l.remove());
    let k = 0;
    for (let q = 0; q < players; q++) {
      if (q === Number(seat.value)) continue;
      const label = document.createElement("label");
      label.textContent = "player_" + q + " ";
      const select = document.createElement("select");
      select.className = "opponent";
      for (const spec of setup.opponents) select.appendChild(new Option(spec, spec));
      select.value = previous[k] || setup.opponents[0];
      label.appendChild(select);
      box.appendChild(label);
      k++;
    }
  }

  async function start(ev) {
    ev.preventDefault();
    showError("");
    const settings = {
      players: Number($("players").value), seat: Number($("seat").value),
      opponents: Array.from(document.querySelectorAll("select.opponent")).map((s) => s.value),
      oracle: $("oracle").checked, demon: $("demon").checked,
    };
    if ($("seed").value !== "") settings.seed = Number($("seed").value);
    $("start").disabled = true;
    try {
      render(await api("POST", "/api/games", settings));
      $("setup").hidden = true;
      $("game").hidden = false;
    } catch (err) {
      showError(err.message);
    } finally {
      $("start").disabled = false;
    }
  }

  function render(state) {
    game = state;
    $("board").innerHTML = state.svg;
    const log = $("log");
    log.replaceChildren(...state.log.map((entry) => {
      const item = document.createElement("li");
      item.textContent = entry.text;
      for (const event of entry.events) {
        const span = document.createElement("span");
        span.className = "event";
        span.textContent = event;
        item.appendChild(span);
      }
      return item;
    }));
    log.scrollTop = log.scrollHeight;
    const options = $("options");
    options.replaceChildren(...state.options.map((option, k) => {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.action = String(option.action);
      const key = document.createElement("kbd");
      key.textContent = k < 9 ? String(k + 1) : "";
      button.append(key, " " + option.text);
      button.addEventListener("click", () => move(option.action));
      item.appendChild(button);
      return item;
    }));
    $("choices-title").hidden = !state.your_turn;
    $("only").hidden = !(state.your_turn && state.only);
    $("only").textContent = state.only ? "Only one option: " + state.only + "." : "";
    const waiting = $("waiting");
    waiting.hidden = state.your_turn || state.status !== "playing";
    if (state.status === "playing" && !state.your_turn) {
      waiting.textContent = state.labels[state.to_move] + " is thinking\u2026";
    }
    $("status").textContent = state.status === "playing"
      ? (state.your_turn ? (state.options.length === 1 ? "Your move: only one option is legal (the options say why)."
                                                       : "Your move: choose one of the options (or press its number).")
                         : "Waiting for " + state.labels[state.to_move] + ".")
      : (state.status === "failed" ? state.message : "The game is over.");
    $("end").hidden = state.status === "playing";
    $("result").textContent = state.result || state.message || "";
    $("scoring").textContent = state.scoring || "";
    if (state.record) {
      $("download").href = URL.createObjectURL(new Blob([JSON.stringify(state.record, null, 1)],
                                                        { type: "application/json" }));
    }
    $("download").parentElement.hidden = !state.record;
    clearTimeout(timer);
    if (state.status === "playing" && !state.your_turn) timer = setTimeout(advance, Number($("speed").value));
  }

  async function move(action) {
    if (!game || !game.your_turn) return;
    showError("");
    document.querySelectorAll("#options button").forEach((b) => { b.disabled = true; });
    try {
      render(await api("POST", "/api/games/" + game.id + "/move", { action }));
    } catch (err) {
      showError(err.message);
      render(await api("GET", "/api/games/" + game.id));
    }
  }

  async function advance() {
    try {
      render(await api("POST", "/api/games/" + game.id + "/advance"));
    } catch (err) {
      showError(err.message);
    }
  }

  document.addEventListener("keydown", (ev) => {
    if (!game || !game.your_turn || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
    const k = Number(ev.key);
    if (k >= 1 && k <= Math.min(9, game.options.length)) { ev.preventDefault(); move(game.options[k - 1].action); }
  });

  $("new-game").addEventListener("click", () => {
    clearTimeout(timer);
    game = null;
    $("board").replaceChildren();
    $("options").replaceChildren();
    $("game").hidden = true;
    $("setup").hidden = false;
  });
  $("players").addEventListener("change", seatOptions);
  $("seat").addEventListener("change", seatOptions);
  $("setup-form").addEventListener("submit", start);

  api("GET", "/api/setup").then((data) => {
    setup = data;
    $("results-link").hidden = !data.results;
    seatOptions();
  }).catch((err) => showError("cannot reach the server: " + err.message));
})();
