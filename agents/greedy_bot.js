#!/usr/bin/env node
// A Bali bot in JavaScript (Node.js, from the system's package manager: apt-get install nodejs),
// speaking the bot protocol of docs/protocol.md over standard input and output, one JSON object
// per line. A few rules of thumb, read from the named view: take VP at a shrine scoring, buy an
// offering card when it is cheap, play the card that scores in the most columns, take from the
// column whose next card scores best for us. Standard library only.
//
//   bali tournament --agents "cmd:node agents/greedy_bot.js" random --players 2 --games 20
"use strict";
const readline = require("readline");

const FARMER = { rice: "rice_farmer", peanuts: "peanut_farmer", bananas: "banana_farmer", chilies: "chili_farmer" };

// how much this bot likes a card's scoring for itself: its cards of that kind in the tableau
function worth(view, card) {
  const mine = view.seats[0].tableau;
  return card ? (mine[card] || 0) : 0;
}

function choose(message) {
  const view = message.view;
  const legal = message.legal;
  const byName = (prefix) => legal.filter((a) => a.name.startsWith(prefix));
  const first = legal[0].id;
  switch (view.decision) {
    case "shrine_reward":
      return (byName("shrine reward: VP")[0] || legal[0]).id;
    case "take_offering": {
      const takes = byName("take ").filter((a) => a.name !== "pass");
      // the category of our most numerous farmers is the cheapest to buy
      let best = null, bestFarmers = -1;
      for (const a of takes) {
        const category = a.name.slice(5);
        const farmers = view.seats[0].tableau[FARMER[category]] || 0;
        if (farmers > bestFarmers) { best = a; bestFarmers = farmers; }
      }
      return best && bestFarmers >= 3 ? best.id : (byName("pass")[0] || legal[0]).id;
    }
    case "play": {
      const shrine = byName("play shrine")[0];
      if (shrine) return shrine.id;
      const farmers = byName("play ").filter((a) => a.name.includes("farmer"));
      if (farmers.length) return farmers[farmers.length - 1].id;  // the most farmers at once
      return first;
    }
    case "refill": {
      let best = first, bestScore = -1;
      for (const a of byName("take column ")) {
        const column = view.market[Number(a.name.slice(12))];
        const next = column.length > 1 ? column[1] : null;  // what gets scored after this take
        const score = worth(view, next);
        if (score > bestScore) { best = a.id; bestScore = score; }
      }
      return best;
    }
    default:
      return first;
  }
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (raw) => {
  const message = JSON.parse(raw);
  if (message.type === "hello") {
    process.stdout.write(JSON.stringify({ type: "hello", name: "greedy-js", version: 1 }) + "\n");
  } else if (message.type === "decide") {
    process.stdout.write(JSON.stringify({ action: choose(message) }) + "\n");
  } else if (message.type === "quit") {
    rl.close();
    process.exit(0);
  }
});
