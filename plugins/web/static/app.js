// The web chat and dashboard. Plain browser JavaScript, no build step.
// Text from the host is always inserted as text (never as HTML): replies, tool results and
// briefings can carry content a third party wrote.
"use strict";

(() => {
  const POLL_MS = 3000; // dashboard refresh; briefings also arrive live on the event stream
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const params = new URLSearchParams(location.search);
  const SESSION_RE = /^(?!\.+$)[A-Za-z0-9_.-]{1,64}$/;  // as the server's (platform.py)
  let session = params.get("session") || localStorage.getItem("bothost.session") || "";
  if (!SESSION_RE.test(session)) session = "s-" + Math.random().toString(36).slice(2, 10);
  localStorage.setItem("bothost.session", session);
  // ?start=N: an earlier conversation of the session (one a /new ended), shown read only
  const start = /^[0-9]{1,18}$/.test(params.get("start") || "") ? params.get("start") : null;

  const $ = (sel) => document.querySelector(sel);
  const log = $("#log");

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function post(path, body) {
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
  }

  function scrollDown() { log.scrollTop = log.scrollHeight; }

  // a stopped turn keeps what it had streamed, marked as cut short (live and after a reload)
  function markStopped(node) {
    node.classList.add("stopped");
    node.append(el("span", { class: "stopped-mark", text: "Stopped." }));
  }

  function addMessage(role, text) {
    const body = el("span", { class: "text", text });
    const node = el("div", { class: `msg ${role}` }, body);
    if (role === "bot") showMedia(node, text);
    log.append(node);
    scrollDown();
    return node;
  }

  // Files a reply names as /media/<file> (images, audio and files MCP tools returned, which
  // the model sees only as such links): shown under the message, pictures and sound inline,
  // anything else as a link. The names are the host's own (a content hash and a type's
  // extension), served with a sandboxing CSP: only those shapes are taken.
  const MEDIA_RE = /\/media\/([A-Za-z0-9_][A-Za-z0-9_-]{0,200}\.[a-z0-9]{1,8})\b/g;
  const PICTURES = new Set(["png", "jpg", "jpeg", "gif", "webp"]);
  const SOUNDS = new Set(["mp3", "wav", "ogg", "oga", "m4a"]);
  function showMedia(node, text) {
    const names = [...new Set([...String(text || "").matchAll(MEDIA_RE)].map((m) => m[1]))];
    if (!names.length) return;
    const shelf = el("div", { class: "media-shelf" });
    for (const name of names) {
      const src = `/media/${name}`;
      const ext = name.split(".").pop();
      if (PICTURES.has(ext)) {
        shelf.append(el("a", { href: src, target: "_blank", rel: "noopener" },
          el("img", { class: "media", src, alt: name, loading: "lazy" })));
      } else if (SOUNDS.has(ext)) {
        shelf.append(el("audio", { class: "media", src, controls: "" }));
      } else {
        shelf.append(el("a", { class: "media", href: src, target: "_blank", rel: "noopener", text: name }));
      }
    }
    node.append(shelf);
  }

  // --- chat: the reply streams in as Server-Sent Events on the POST response -------------

  function parseFrame(frame) {
    let event = "message";
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    return data.length ? { event, data: JSON.parse(data.join("\n")) } : null;
  }

  async function send(text) {
    addMessage("user", text);
    const bubble = addMessage("bot streaming", "");
    const textNode = bubble.querySelector(".text");
    const status = el("span", { class: "status" });
    bubble.append(status);
    let streamed = "";
    try {
      const resp = await post("/api/chat/stream", { session, text });
      if (!resp.ok) throw new Error(`${resp.status} ${(await resp.text()).trim()}`);
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = parseFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (!frame) continue;
          if (frame.event === "delta") {
            streamed += frame.data.text;
            textNode.textContent = streamed;
            bubble.dataset.deltas = String(Number(bubble.dataset.deltas || 0) + 1);
          }
          else if (frame.event === "status") status.textContent = frame.data.text;
          else if (frame.event === "done" && frame.data.outcome === "stopped") {
            status.textContent = ""; markStopped(bubble); // the words shown stay shown
          }
          else if (frame.event === "done") {
            textNode.textContent = frame.data.reply; status.textContent = "";
            showMedia(bubble, frame.data.reply);
          }
          scrollDown();
        }
      }
      bubble.classList.add("done");
    } catch (err) {
      bubble.classList.add("error");
      textNode.textContent = `Could not reach the bot: ${err.message}`;
    } finally {
      bubble.classList.remove("streaming");
      refresh(); // the turn may have called tools: show them now, not at the next poll
      refreshConversations(); // its first line, or its time, changed
    }
  }

  $("#composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("#chat-input");
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    hideSuggestions();
    if (text.toLowerCase() === "/new") newConversation();
    else send(text);
  });
  // --- /prompt completion: Tab asks the host what may replace the last word typed --------

  const PROMPT_RE = /^\/prompt(\s|$)/i;
  const suggestions = $("#suggestions");

  function hideSuggestions() { suggestions.hidden = true; suggestions.replaceChildren(); }

  // the last word replaced by `value`; a finished word (not a server's "files/" nor an
  // argument's "style=") gets the space that starts the next one
  function useCompletion(input, value) {
    const cut = input.value.search(/\S*$/);
    const finished = !value.endsWith("/") && !value.endsWith("=");
    input.value = input.value.slice(0, cut) + value + (finished ? " " : "");
    hideSuggestions();
    input.focus();
  }

  function commonPrefix(values) {
    return values.reduce((a, b) => { let i = 0; while (i < a.length && a[i] === b[i]) i++; return a.slice(0, i); });
  }

  async function completePrompt(input) {
    const text = /^\/prompt$/i.test(input.value) ? input.value + " " : input.value;
    const resp = await fetch(`/api/prompt/complete?text=${encodeURIComponent(text)}`, { credentials: "same-origin" });
    const values = resp.ok ? (await resp.json()).values : [];
    if (input.value !== text) input.value = text;
    if (values.length === 1) { useCompletion(input, values[0]); return; }
    hideSuggestions();
    if (!values.length) return;
    const typed = text.slice(text.search(/\S*$/));
    const shared = commonPrefix(values);
    if (shared.length > typed.length) input.value = text.slice(0, text.length - typed.length) + shared;
    suggestions.append(...values.map((value) => el("li", {}, el("button", { type: "button", text: value,
      onclick: () => useCompletion(input, value) }))));
    suggestions.hidden = false;
  }

  $("#chat-input").addEventListener("input", hideSuggestions);
  $("#chat-input").addEventListener("keydown", (event) => {
    if (event.key === "Tab" && !event.shiftKey && PROMPT_RE.test(event.target.value)) {
      event.preventDefault(); // Tab completes here; elsewhere it moves focus as usual
      completePrompt(event.target);
      return;
    }
    if (event.key === "Escape") hideSuggestions();
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("#composer").requestSubmit();
    }
  });
  $("#stop").addEventListener("click", () => post("/api/chat", { session, text: "stop" }));

  // `/new`: the host starts the session afresh (the old messages stay in its database);
  // the page shows the new conversation from its first line, as a reload would
  async function newConversation() {
    const resp = await post("/api/chat", { session, text: "/new" });
    const reply = resp.ok ? (await resp.json()).reply : `Could not reach the bot: ${resp.status}`;
    if (resp.ok && reply.startsWith("Started")) log.replaceChildren();
    addMessage("bot", reply);
    refreshConversations();
  }
  $("#new").addEventListener("click", newConversation);

  // --- questions: approvals and forms asked by a running turn ---------------------------

  function closeQuestion(card, outcome) {
    card.classList.add("closed");
    for (const b of card.querySelectorAll("button, input, select")) b.disabled = true;
    if (outcome && !card.querySelector(".outcome")) card.append(el("div", { class: "outcome", text: outcome }));
  }

  async function answer(card, id, value, outcome) {
    closeQuestion(card, "sending…");
    const resp = await post("/api/answer", { session, id, answer: value });
    card.querySelector(".outcome").textContent = resp.ok ? outcome : "This question is no longer open.";
  }

  // The choices a property offers, as [value, label] pairs: an `enum` (labelled by a legacy
  // `enumNames`), or a `oneOf`/`anyOf` of {const, title} (MCP elicitation's titled enums).
  function choices(prop) {
    if (!prop || typeof prop !== "object") return [];
    if (Array.isArray(prop.enum)) {
      const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
      return prop.enum.map((value, i) => [value, names[i] !== undefined ? names[i] : value]);
    }
    const listed = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : [];
    return listed.filter((o) => o && typeof o === "object" && "const" in o)
      .map((o) => [o.const, o.title || o.const]);
  }

  function field(name, prop, required, secret) {
    const label = prop.title || prop.description || name;
    // a multi-select is an array whose items are choices; its answer is a list
    const items = prop.type === "array" && prop.items && typeof prop.items === "object" ? prop.items : null;
    const listed = choices(items || prop);
    let input;
    if (listed.length) {
      input = el("select", { name });
      input.multiple = items !== null;
      const wanted = (Array.isArray(prop.default) ? prop.default : [prop.default]).map(String);
      for (const [value, text] of listed) {
        const option = el("option", { value: String(value), text: String(text) });
        option.selected = prop.default !== undefined && wanted.includes(String(value));
        input.append(option);
      }
    } else if (prop.type === "boolean") {
      input = el("input", { name, type: "checkbox" });
      if (prop.default === true) input.checked = true;
    } else {
      const type = secret || prop.format === "password" ? "password"
        : (prop.type === "number" || prop.type === "integer") ? "number" : "text";
      input = el("input", { name, type });
      if (prop.type === "number") input.step = "any";
    }
    if (prop.default !== undefined && prop.type !== "boolean" && !listed.length) input.value = String(prop.default);
    if (required && prop.type !== "boolean") input.required = true;
    input.dataset.kind = prop.type || "string";
    return el("label", { class: "field" }, el("span", { text: label + (required ? " *" : "") }), input);
  }

  function formValues(form) {
    const values = {};
    for (const input of form.querySelectorAll("input, select")) {
      const kind = input.dataset.kind;
      if (input.multiple) values[input.name] = Array.from(input.selectedOptions, (o) => o.value);
      else if (kind === "boolean") values[input.name] = input.checked;
      else if (input.value === "") continue;
      else if (kind === "integer") values[input.name] = parseInt(input.value, 10);
      else if (kind === "number") values[input.name] = parseFloat(input.value);
      else values[input.name] = input.value;
    }
    return values;
  }

  function showQuestion(q) {
    if (log.querySelector(`.question[data-id="${q.id}"]`)) return;
    const card = el("div", { class: "question", "data-id": q.id, role: "group" }, el("p", { text: q.text }));
    if (q.kind === "approval") {
      // further ways to say yes that the host offers ("allow for this conversation", …)
      const choices = (q.choices || []).map((c) =>
        el("button", { class: "approve-choice", type: "button", text: c.label,
                       onclick: () => answer(card, q.id, c.value, `Approved: ${c.label.toLowerCase()}.`) }));
      card.append(el("div", { class: "buttons" },
        el("button", { class: "approve", type: "button", text: "Approve",
                       onclick: () => answer(card, q.id, true, "Approved.") }), " ",
        ...choices.flatMap((b) => [b, " "]),
        el("button", { class: "deny", type: "button", text: "Deny",
                       onclick: () => answer(card, q.id, false, "Denied.") })));
    } else {
      const schema = q.schema || {};
      const required = new Set(schema.required || []);
      const form = el("form", { class: "elicitation" });
      for (const [name, prop] of Object.entries(schema.properties || {})) {
        form.append(field(name, prop, required.has(name), q.secret));
      }
      form.append(el("div", { class: "buttons" },
        el("button", { class: "submit primary", type: "submit", text: "Submit" }), " ",
        el("button", { class: "decline", type: "button", text: "Decline",
                       onclick: () => answer(card, q.id, false, "Declined.") }), " ",
        el("button", { class: "cancel", type: "button", text: "Cancel",
                       onclick: () => answer(card, q.id, null, "Cancelled.") })));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        answer(card, q.id, formValues(form), "Sent.");
      });
      card.append(form);
    }
    // the turn asking is the reply still streaming: the question comes before its answer
    log.insertBefore(card, log.querySelector(".msg.bot.streaming"));
    scrollDown();
  }

  // --- the live stream: questions, messages, briefings ---------------------------------

  function connect() {
    const conn = $("#conn");
    const stream = new EventSource(`/api/events?session=${encodeURIComponent(session)}`);
    stream.addEventListener("hello", () => { conn.textContent = "live"; conn.classList.add("live"); });
    stream.addEventListener("question", (e) => showQuestion(JSON.parse(e.data)));
    stream.addEventListener("question_closed", (e) => {
      const card = log.querySelector(`.question[data-id="${JSON.parse(e.data).id}"]`);
      if (card && !card.classList.contains("closed")) closeQuestion(card, "No longer open.");
    });
    stream.addEventListener("message", (e) => addMessage("bot", JSON.parse(e.data).text));
    stream.addEventListener("briefing", (e) => addBriefing(JSON.parse(e.data), true));
    stream.onerror = () => { conn.textContent = "reconnecting…"; conn.classList.remove("live"); };
  }

  // --- dashboard ------------------------------------------------------------------------

  function when(seconds) {
    return seconds ? new Date(seconds * 1000).toLocaleString() : "";
  }

  // The briefing's text line by line, each item once: its line carries its buttons (the
  // text's "[Ack] [Snooze]" markers stand in for buttons where a platform has none)
  const MARKERS_RE = / {2}(\[[^\]]+\] ?)+$/;
  const HEADINGS = new Set(["URGENT", "HIGH", "FYI"]);
  function briefingBody(b) {
    const items = (b.structure || {}).items || [];
    if (!items.length) return el("pre", { text: withoutTitle(b.text, b.title) });
    const list = briefingActions(b.structure) || el("ul", { class: "item-actions" });
    const rows = [...list.children];
    let next = 0;
    const lines = withoutTitle(b.text, b.title).split("\n").map((line) => {
      if (!line.startsWith("• ") || next >= items.length) {
        return el("li", { class: HEADINGS.has(line) ? "line heading" : "line", text: line });
      }
      const item = items[next++];
      const text = (item.actions || []).length ? line.replace(MARKERS_RE, "") : line;
      const at = rows.findIndex((r) => r.firstChild && r.firstChild.textContent === item.summary + " ");
      const row = at >= 0 ? rows.splice(at, 1)[0] : el("li", {}, el("span"));
      row.firstChild.textContent = text + " ";
      row.classList.add("item");
      if ((item.actions || []).includes("open") && /^https?:\/\//i.test(item.url || "")) {
        row.insertBefore(el("a", { class: "open", href: item.url, target: "_blank",
          rel: "noopener noreferrer", text: "Open" }), row.children[1] || null);
      }
      return row;
    });
    list.replaceChildren(...lines, ...rows);
    return list;
  }

  function addBriefing(b, live) {
    const list = $("#briefings");
    if (list.querySelector(`.briefing[data-id="${b.id}"]`)) return;
    list.querySelector(".empty")?.remove();
    const item = el("li", { class: "briefing" + (live ? " new" : ""), "data-id": String(b.id) },
      el("h3", { text: b.title }), el("time", { text: `${when(b.created_at)} · ${b.address}` }),
      briefingBody(b));
    const newer = [...list.children].find((li) => Number(li.dataset.id) < b.id);
    list.insertBefore(item, newer || null);
  }

  function withoutTitle(text, title) {
    return text.startsWith(title + "\n") ? text.slice(title.length + 1) : text;
  }

  // [Ack] / [Snooze 1h] where the item offers them, and on every item [Less like this] /
  // [More like this]: the host proposes a triage rule, applied only when [Apply] is pressed
  function briefingActions(structure) {
    const items = (structure.items || []).filter((i) => (i.event_ids || []).length);
    if (!items.length) return null;
    const list = el("ul", { class: "item-actions" });
    for (const i of items) {
      const done = el("span", { class: "feedback-done" });
      const act = (action, label) => el("button", { type: "button", class: action, text: label,
        onclick: async (event) => {
          const resp = await post("/api/feedback", { action, event_ids: i.event_ids, minutes: 60 });
          done.textContent = resp.ok ? (action === "ack" ? " acknowledged" : " snoozed 1 h") : " failed";
          for (const b of event.target.parentElement.querySelectorAll("button")) b.disabled = resp.ok;
          refresh();
        } });
      const confirm = el("div", { class: "like-this" });
      const like = (direction, label) => el("button", { type: "button", class: direction, text: label,
        onclick: async () => {
          const resp = await post("/api/feedback", { action: direction, event_ids: i.event_ids });
          showProposal(confirm, resp.ok ? await resp.json() : { text: "No proposal: the request failed." });
        } });
      list.append(el("li", {}, el("span", { text: i.summary + " " }),
        (i.actions || []).includes("ack") ? act("ack", "Ack") : null, " ",
        (i.actions || []).includes("snooze") ? act("snooze", "Snooze 1h") : null, " ",
        like("less", "Less like this"), " ", like("more", "More like this"), done, confirm));
    }
    return list;
  }

  // the proposed rule with [Apply] [Cancel]; nothing is stored before [Apply]
  function showProposal(row, found) {
    const apply = found.proposal ? el("button", { type: "button", class: "apply", text: "Apply",
      onclick: async () => {
        const resp = await post("/api/feedback", { action: "apply", proposal: found.proposal });
        const done = await resp.json().catch(() => ({}));
        row.replaceChildren(el("span", { class: "feedback-done", text: done.text || done.error || "failed" }));
      } }) : null;
    const cancel = el("button", { type: "button", class: "cancel", text: found.proposal ? "Cancel" : "Close",
      onclick: () => row.replaceChildren() });
    row.replaceChildren(el("span", { class: "proposal", text: found.text + " " }), apply, " ", cancel);
  }

  function fillTable(selector, rows, columns, emptyText, rowClass) {
    const body = $(selector).tBodies[0];
    body.replaceChildren();
    if (!rows.length) {
      body.append(el("tr", { class: "empty" }, el("td", { colspan: String(columns.length), text: emptyText })));
      return;
    }
    for (const row of rows) {
      body.append(el("tr", { class: rowClass ? rowClass(row) : "" },
        ...columns.map((col) => el("td", { text: col(row) }))));
    }
  }

  function renderDashboard(d) {
    for (const b of [...d.briefings].reverse()) addBriefing(b, false);
    fillTable("#mcp", d.mcp, [
      (s) => s.name,
      // a crash loop reads "ready" between its deaths, its error cleared: the count says it
      (s) => (s.state || "") + (s.restarts ? ` (restarted ${s.restarts === 1 ? "once" : `${s.restarts} times`})` : ""),
      (s) => (s.tool_names && s.tool_names.length) ? `${s.tool_names.length}: ${s.tool_names.join(", ")}`
        : String(s.tools ?? ""),
      (s) => s.error || "",
    ], "No MCP servers running.");
    for (const [i, s] of d.mcp.entries()) {
      if (s.state !== "login_needed") continue;
      // a remote server waiting for an OAuth login: a button that begins one here
      const button = el("button", { type: "button", class: "login", text: "Log in" });
      button.addEventListener("click", async () => {
        const response = await post(`/api/mcp/${encodeURIComponent(s.name)}/login`, {});
        const data = await response.json();
        if (data.url) window.open(data.url, "_blank", "noopener");
        else button.replaceWith(el("span", { text: data.error || "login failed" }));
      });
      $("#mcp").tBodies[0].rows[i].cells[1].append(" ", button);
    }
    const queue = $("#queue");
    queue.replaceChildren(...Object.entries(d.queue).map(([status, n]) =>
      el("div", {}, el("dt", { text: status }), el("dd", { text: String(n), "data-status": status }))));
    fillTable("#tool-calls", d.tool_calls, [
      (c) => c.tool, (c) => c.status || (c.is_error ? "error" : "ok"),
      (c) => c.duration_ms == null ? "" : String(Math.round(c.duration_ms)), (c) => c.result,
    ], "No tool calls yet.", (c) => c.is_error ? "is-error" : "");
    renderUsage(d.usage || { rows: [], budgets: [] });
  }

  // today's model usage by person (the tick as "tick"); "~" marks estimates, "+?" unpriced
  function renderUsage(u) {
    // thousands with commas, as `bothost usage` prints them, whatever the browser's locale
    const n = (value) => String(Math.round(value || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    const cost = (r) => u.priced ? r.cost.toFixed(2) + (r.unpriced ? "+?" : "") : "";
    fillTable("#usage", u.rows.length ? [...u.rows, u.total] : [], [
      (r) => r.key, (r) => n(r.calls), (r) => (r.estimated ? "~" : "") + n(r.tokens),
      (r) => n(r.cached), cost,
    ], "No model calls today.");
    $("#budgets").replaceChildren(...u.budgets.map((b) => {
      const parts = [];
      if (b.tokens != null) parts.push(`${n(b.used.tokens)} of ${n(b.tokens)} tokens`);
      if (b.cost != null) parts.push(`${b.used.cost.toFixed(2)} of ${b.cost.toFixed(2)} ${u.currency}`);
      const who = b.name === "user_daily" && b.who ? ` (most: ${b.who})` : "";
      return el("li", { class: b.spent ? "is-error" : "",
        text: `${b.name}: ${parts.join(", ")}${who}${b.spent ? " — spent" : ""}` });
    }));
  }

  // --- permission rules: stored ones can be removed here; config ones live in the file ---

  function ruleWhen(r) {
    const parts = [];
    if (r.args) parts.push(Object.entries(r.args).map(([k, v]) => `${k}=${v}`).join(", ") + (r.exact ? " (exact)" : ""));
    if (r.who) parts.push(Object.entries(r.who).map(([k, v]) => `${k}=${[].concat(v).join(",")}`).join(" "));
    if (r.note) parts.push(`— ${r.note}`);
    return parts.join("  ");
  }

  function renderRules(data) {
    const body = $("#rules").tBodies[0];
    const rows = [...data.rules, ...data.remembered];
    body.replaceChildren();
    if (!rows.length) {
      body.append(el("tr", { class: "empty" }, el("td", { colspan: "6", text: "No rules: the default decides." })));
      return;
    }
    for (const r of rows) {
      const remove = r.origin === "config" ? null : el("button", { type: "button", class: "remove-rule", text: "Remove",
        onclick: async () => { await post("/api/rules/remove", { id: r.id }); refreshRules(); } });
      body.append(el("tr", { class: `rule-${r.origin}` },
        el("td", { text: r.position ? String(r.position) : "" }),
        el("td", { text: `${r.ref} ${r.origin}` }), el("td", { text: r.action }),
        el("td", { text: r.tool_origin ? `${r.tool} (${r.tool_origin.label})` : r.tool }),
        el("td", { text: ruleWhen(r) }), el("td", {}, remove)));
    }
  }

  async function refreshRules() {
    const resp = await fetch("/api/rules", { credentials: "same-origin" });
    if (resp.ok) renderRules(await resp.json());
  }

  function jsonField(form, name) {
    const text = form.elements[name].value.trim();
    return text ? JSON.parse(text) : undefined;
  }

  $("#rule-add").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const out = form.querySelector(".rule-result");
    let rule;
    try {
      rule = { tool: form.elements.tool.value.trim(), action: form.elements.action.value,
               args: jsonField(form, "args"), who: jsonField(form, "who"), note: form.elements.note.value };
    } catch (err) { out.textContent = "args and who must be JSON objects"; return; }
    const resp = await post("/api/rules", rule);
    const data = await resp.json();
    out.textContent = resp.ok ? [`Added ${data.ref}.`, ...(data.notes || []).map((n) => `Note: ${n}.`)].join(" ") : data.error;
    if (resp.ok) { form.reset(); refreshRules(); }
  });

  $("#rule-test").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const out = form.querySelector(".rule-result");
    let body;
    try { body = { tool: form.elements.tool.value.trim(), arguments: jsonField(form, "arguments") || {} }; }
    catch (err) { out.textContent = "arguments must be a JSON object"; return; }
    const resp = await post("/api/rules/test", body);
    const d = await resp.json();
    if (!resp.ok) { out.textContent = d.error; return; }
    const lines = [`${d.action}: ${d.tool}`];
    if (d.rule) lines.push(`rule ${d.rule.position} (${d.rule.ref}, ${d.rule.origin}): ${d.matched.join("; ")}`);
    lines.push(d.reason);
    if (d.remembered) lines.push(`remembered answer ${d.remembered.ref} says yes instead of asking`);
    for (const n of d.notes) lines.push(`note: ${n}`);
    out.textContent = lines.join("\n");
  });

  // --- scheduled jobs: reminders and checks, each with a cancel button ---

  function jobWhen(j) {
    if (j.cron) return `cron ${j.cron} (${j.tz})` + (j.next_run ? `, next ${when(j.next_run)}` : "");
    return `${when(j.at)} (${j.tz})`;
  }

  function renderSchedules(data) {
    const body = $("#schedules").tBodies[0];
    body.replaceChildren();
    if (!data.jobs.length) {
      body.append(el("tr", { class: "empty" }, el("td", { colspan: "7", text: "No scheduled jobs." })));
      return;
    }
    for (const j of data.jobs) {
      const cancel = el("button", { type: "button", class: "cancel-job", text: "Cancel",
        onclick: async () => { await post("/api/schedules/cancel", { id: j.id }); refreshSchedules(); } });
      const failed = j.status === "failed" ? ` — failed: ${j.last_error || ""}` : "";
      body.append(el("tr", { class: `job-${j.status}` },
        el("td", { text: String(j.id) }), el("td", { text: jobWhen(j) }), el("td", { text: j.kind }),
        el("td", { text: j.owner }), el("td", { text: j.target }),
        el("td", { text: j.text + failed }), el("td", {}, cancel)));
    }
  }

  async function refreshSchedules() {
    const resp = await fetch("/api/schedules", { credentials: "same-origin" });
    if (resp.ok) renderSchedules(await resp.json());
  }

  async function refresh() {
    try {
      const resp = await fetch("/api/dashboard", { credentials: "same-origin" });
      if (resp.ok) renderDashboard(await resp.json());
      await refreshRules();
      await refreshSchedules();
    } catch (err) { /* the host is restarting; the next poll tries again */ }
  }

  async function poll() {
    await refresh();
    setTimeout(poll, POLL_MS);
  }

  // --- conversations: every web session's, each cut at its /new; a link opens one ---------

  function conversationLink(c) {
    const query = `?session=${encodeURIComponent(c.session)}` + (c.current ? "" : `&start=${c.start}`);
    const here = c.session === session && (start === null ? c.current : String(c.start) === start);
    const link = el("a", { href: query, text: c.first || "(nothing said yet)",
      title: `session ${c.session}${c.current ? "" : " (ended by /new)"}` });
    if (here) link.setAttribute("aria-current", "page");
    return el("li", { class: c.current ? "current" : "earlier" }, link,
      el("time", { text: `${c.session} · ${when(c.updated_at)}` }));
  }

  async function refreshConversations() {
    const resp = await fetch("/api/conversations", { credentials: "same-origin" });
    if (!resp.ok) return;
    const listed = (await resp.json()).conversations;
    $("#conversation-list").replaceChildren(...(listed.length ? listed.map(conversationLink)
      : [el("li", { class: "empty", text: "No conversations yet." })]));
  }

  // an earlier conversation is what was said then: nothing is sent to it, nothing live arrives
  function showReadOnly() {
    $("#viewing").hidden = false;
    $("#back").href = `?session=${encodeURIComponent(session)}`;
    for (const control of $("#composer").querySelectorAll("textarea, button")) control.disabled = true;
    $("#conn").textContent = "read only";
  }

  async function loadHistory() {
    const range = start === null ? "" : `&start=${start}`;
    const resp = await fetch(`/api/history?session=${encodeURIComponent(session)}${range}`, { credentials: "same-origin" });
    if (!resp.ok) return;
    for (const m of (await resp.json()).messages) {
      const node = addMessage(m.role === "user" ? "user" : "bot", m.text);
      if (m.stopped) markStopped(node);
    }
  }

  const sessionInput = $("#session-name");
  sessionInput.value = session;
  sessionInput.addEventListener("change", () => {
    if (!SESSION_RE.test(sessionInput.value)) { sessionInput.value = session; return; }
    localStorage.setItem("bothost.session", sessionInput.value);
    location.search = `?session=${encodeURIComponent(sessionInput.value)}`;
  });

  if (start !== null) showReadOnly();
  loadHistory().finally(() => { if (start === null) connect(); });
  refreshConversations();
  poll();
})();
