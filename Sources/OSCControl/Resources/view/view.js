// Soundstage web view: speaks the engine's OSC address space over the WebSocket of its HTTP server
// (binary frames are OSC packets), listens to values with OSCQuery's LISTEN, and draws the graph,
// meters, transport, 3D top views, session and notifications. Plain JS, no build step.
// SPDX-License-Identifier: GPL-3.0-or-later
"use strict";

(() => {
  // ---------------------------------------------------------------------------------------------
  // Small helpers

  const SVG_NS = "http://www.w3.org/2000/svg";

  function h(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function s(tag, attrs = {}, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  const $ = (id) => document.getElementById(id);
  const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
  const round = (x, digits = 2) => Number(x.toFixed(digits));

  function clock() {
    const d = new Date();
    const pad = (n, w = 2) => String(n).padStart(w, "0");
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }

  function formatArg(arg) {
    if (typeof arg === "number") return Number.isInteger(arg) ? String(arg) : arg.toFixed(3).replace(/0+$/, "0");
    if (typeof arg === "boolean") return arg ? "T" : "F";
    if (arg === null) return "N";
    if (arg instanceof Uint8Array) return `blob(${arg.length})`;
    if (typeof arg === "object" && "seconds" in arg) return `t:${arg.seconds}`;
    return JSON.stringify(String(arg));
  }

  /// Kinds: colour and shape of their boxes in the graph.
  const KINDS = {
    player: { color: "#4fc3f7", shape: "pill" },
    audioplayer: { color: "#26c6da", shape: "pill" },
    mixer: { color: "#ffb74d", shape: "box" },
    output: { color: "#ef5350", shape: "arrowOut" },
    input: { color: "#66bb6a", shape: "arrowIn" },
    environment: { color: "#ba68c8", shape: "hexagon" },
    reverb: { color: "#f06292", shape: "effect" },
    delay: { color: "#f48fb1", shape: "effect" },
    distortion: { color: "#ff8a65", shape: "effect" },
    eq: { color: "#dce775", shape: "effect" },
    timepitch: { color: "#9575cd", shape: "effect" },
    varispeed: { color: "#7986cb", shape: "effect" },
    voiceprocessor: { color: "#a1887f", shape: "effect" },
    jack: { color: "#90a4ae", shape: "port" },
  };
  const kindInfo = (kind) => KINDS[kind] || { color: "#b0bec5", shape: "box" };
  const isPlayer = (kind) => kind === "player" || kind === "audioplayer";

  // ---------------------------------------------------------------------------------------------
  // State

  const state = {
    nodes: new Map(), // name → { name, kind, channels, active, params: Map(name → {type, min, max, access}), values: {} }
    edges: [], // audio connections { from, fromBus, to, toBus }
    jack: [], // JACK connections { source, destination }
    client: "", // our JACK client name (from /status)
    meters: new Map(), // name → { peaks, rms }
    readOnly: false,
    connected: false,
    meterUpdates: 0, // meter packets received (the test measures their rate)
  };

  // ---------------------------------------------------------------------------------------------
  // The link: one WebSocket, reconnected with backoff

  const link = {
    socket: null,
    backoff: 500,
    retryAt: 0,
    renewTimer: 0,
    listening: new Set(),
    waiters: new Map(), // reply address → [{ resolve, reject, timer }]
    collecting: { "/node/info": [], "/graph/edge": [] },
  };

  function socketURL() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/`;
  }

  function connect() {
    let socket;
    try {
      socket = new WebSocket(socketURL());
    } catch (error) {
      scheduleReconnect();
      return;
    }
    socket.binaryType = "arraybuffer";
    link.socket = socket;
    setConnection("connecting");
    socket.onopen = () => {
      link.backoff = 500;
      link.listening.clear();
      setConnection("connected");
      send("/notify", OSC.int(1));
      send("/meters", OSC.int(50));
      send("/status");
      refreshSession();
      refreshGraph();
    };
    socket.onmessage = (event) => {
      if (typeof event.data === "string") receiveText(event.data);
      else receivePacket(event.data);
    };
    socket.onclose = () => {
      if (link.socket !== socket) return;
      link.socket = null;
      clearTimeout(link.renewTimer);
      for (const list of link.waiters.values()) for (const w of list) w.reject(new Error("disconnected"));
      link.waiters.clear();
      setConnection("disconnected");
      for (const name of state.meters.keys()) showMeter(name, null);
      scheduleReconnect();
    };
    socket.onerror = () => socket.close();
  }

  function scheduleReconnect() {
    const delay = link.backoff;
    link.backoff = Math.min(link.backoff * 2, 5000);
    link.retryAt = Date.now() + delay;
    setTimeout(connect, delay);
  }

  function setConnection(status) {
    state.connected = status === "connected";
    const pill = $("connection");
    pill.dataset.state = status;
    pill.textContent = status;
    pill.className = "pill " + (status === "connected" ? "good" : "bad");
    $("offline").hidden = status !== "disconnected";
    document.body.classList.toggle("is-offline", status !== "connected");
  }

  setInterval(() => {
    if (!$("offline").hidden) $("retry").textContent = `in ${Math.max(0, Math.ceil((link.retryAt - Date.now()) / 1000))} s`;
  }, 250);

  function send(address, ...args) {
    const socket = link.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(OSC.encodeMessage(address, args));
    return true;
  }

  function sendText(object) {
    const socket = link.socket;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(object));
  }

  /// Sends a request and resolves with the reply on `replyAddress` (for a list: the items collected before
  /// its `/reply`), or rejects on its `/error` or after `timeout` ms.
  function request(address, args, replyAddress, timeout = 5000) {
    return new Promise((resolve, reject) => {
      const list = link.waiters.get(replyAddress) || [];
      const waiter = { resolve, reject, timer: 0 };
      waiter.timer = setTimeout(() => {
        const current = link.waiters.get(replyAddress) || [];
        link.waiters.set(replyAddress, current.filter((w) => w !== waiter));
        reject(new Error(`no reply to ${address}`));
      }, timeout);
      list.push(waiter);
      link.waiters.set(replyAddress, list);
      if (!send(address, ...args)) {
        clearTimeout(waiter.timer);
        reject(new Error("not connected"));
      }
    });
  }

  function settle(replyAddress, value, failed = false) {
    const list = link.waiters.get(replyAddress);
    if (!list || list.length === 0) return false;
    const waiter = list.shift();
    clearTimeout(waiter.timer);
    if (failed) waiter.reject(value);
    else waiter.resolve(value);
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Receiving

  function receiveText(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.COMMAND === "PATH_ADDED" || message.COMMAND === "PATH_REMOVED") {
      addNotification(message.COMMAND, [message.DATA]);
      scheduleGraphRefresh();
    }
  }

  function receivePacket(data) {
    let messages;
    try {
      messages = OSC.decodePacket(data);
    } catch (error) {
      console.warn("undecodable OSC packet", error);
      return;
    }
    if (messages.some((m) => m.address === "/meter")) state.meterUpdates++;
    for (const message of messages) receiveMessage(message);
  }

  const NOTIFICATION_PREFIXES = [
    "/node/added", "/node/removed", "/graph/connected", "/graph/disconnected", "/player/", "/voice/activity",
    "/environment/problem", "/buffer/consumed", "/engine/", "/patch/reload", "/session/", "/recorder/finished",
    "/recorder/error", "/sound/finished", "/stream/", "/late",
  ];

  function receiveMessage({ address, args }) {
    switch (address) {
      case "/meter":
        receiveMeter(args);
        return;
      case "/voice/meter":
        return;
      case "/node/info":
      case "/graph/edge":
        link.collecting[address].push(args);
        return;
      case "/reply": {
        const of = args[0];
        const key = of === "/node/list" ? "/node/info" : of === "/graph/list" ? "/graph/edge" : null;
        const items = key ? link.collecting[key].splice(0) : [];
        settle(of, items);
        return;
      }
      case "/done":
        receiveDone(args);
        return;
      case "/error":
        receiveError(args);
        return;
      case "/status.reply":
        receiveStatus(args);
        settle("/status.reply", args);
        return;
      case "/session/state":
        showSessionState(args[0]);
        return;
      case "/session/params":
        showSessionParams(args);
        return;
      default:
        break;
    }
    if (NOTIFICATION_PREFIXES.some((p) => address.startsWith(p))) {
      receiveNotification(address, args);
      return;
    }
    const parts = address.split("/");
    if (parts.length === 4 && parts[1] === "node" && args.length === 1) {
      receiveValue(parts[2], parts[3], args[0]);
      return;
    }
    settle(address, args);
  }

  function receiveDone(args) {
    const of = String(args[0] || "");
    if (of === "/notify") {
      const lease = Number(args[2]) || 10;
      scheduleRenew(lease);
    } else if (of === "/renew") {
      scheduleRenew(Number(args[1]) || 10);
    }
    const transport = of.match(/^\/node\/([^/]+)\/(play|pause|stop)$/);
    if (transport) send(`/node/${transport[1]}/playing`);
    settle(of, args.slice(1));
  }

  function scheduleRenew(lease) {
    clearTimeout(link.renewTimer);
    link.renewTimer = setTimeout(() => send("/renew"), Math.max(1000, lease * 500));
  }

  // A hidden tab's timers are throttled, so its lease may have lapsed: renew on coming back (a lapsed
  // one answers /error /renew 66, and the page subscribes again).
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") send("/renew");
  });

  function receiveError(args) {
    const [address, code, message] = args;
    if (address === "/renew" && code === 66) {
      send("/notify", OSC.int(1));
      send("/meters", OSC.int(50));
      return;
    }
    // A read-only server refuses changes with 14 (notAllowed); so does a player with nothing to play,
    // which the message tells apart. A volume set has no other reason to be refused with 14.
    if (code === 14 && (/read.?only/i.test(String(message)) || /^\/node\/[^/]+\/volume$/.test(String(address)))) {
      setReadOnly(true);
    }
    addNotification("/error", args, "error");
    settle(address, new Error(`${address}: ${message} (${code})`), true);
  }

  function setReadOnly(readOnly) {
    if (state.readOnly === readOnly) return;
    state.readOnly = readOnly;
    $("readonly").hidden = !readOnly;
    document.body.classList.toggle("read-only", readOnly);
    for (const control of document.querySelectorAll("[data-action], input[data-param]")) control.disabled = readOnly;
  }

  function receiveNotification(address, args) {
    addNotification(address, args);
    if (/^\/(node\/(added|removed)|graph\/(connected|disconnected)|patch\/reload$|engine\/services_reset)/.test(address)) {
      scheduleGraphRefresh();
    }
    if (address.startsWith("/session/")) scheduleSessionRefresh();
    if (address === "/player/finished" || address === "/player/stopped") send(`/node/${args[0]}/playing`);
  }

  // ---------------------------------------------------------------------------------------------
  // Graph: nodes, their parameters, audio and JACK connections

  // A refresh that fails while connected (a reply lost or late on a loaded machine) is tried again,
  // 1 s later and then up to every 8 s; a reconnect refreshes anyway.
  const graphRefresh = { running: false, again: false, timer: 0, signature: "", retryDelay: 1000 };

  function scheduleGraphRefresh() {
    clearTimeout(graphRefresh.timer);
    graphRefresh.timer = setTimeout(refreshGraph, 100);
  }

  async function refreshGraph() {
    if (graphRefresh.running) {
      graphRefresh.again = true;
      return;
    }
    graphRefresh.running = true;
    try {
      const [infos, edges] = await Promise.all([
        request("/node/list", [], "/node/list"),
        request("/graph/list", [], "/graph/list"),
      ]);
      if (!state.client) await request("/status", [], "/status.reply").catch(() => null);
      const nodes = new Map();
      for (const [name, kind, channels, active] of infos) {
        const old = state.nodes.get(name);
        const same = old && old.kind === kind;
        nodes.set(name, {
          name, kind, channels, active: active === 1,
          params: same ? old.params : new Map(), values: same ? old.values : {}, loaded: same && old.loaded,
        });
      }
      state.nodes = nodes;
      state.edges = [];
      state.jack = [];
      for (const [source, destination] of edges) {
        const a = splitEndpoint(source);
        const b = splitEndpoint(destination);
        if (a && b && nodes.has(a.node) && nodes.has(b.node)) {
          state.edges.push({ from: a.node, fromBus: a.bus, to: b.node, toBus: b.bus });
        } else if (!state.jack.some((j) => j.source === source && j.destination === destination)) {
          // A connection between two of our own ports is listed once from each end.
          state.jack.push({ source, destination });
        }
      }
      for (const name of [...state.meters.keys()]) if (!nodes.has(name)) state.meters.delete(name);
      await Promise.all([...nodes.values()].map(loadParameters));
      // Redraw only when something drawn changed (a notification storm must not rebuild the controls
      // under the user's pointer); values alone update in place.
      const signature = JSON.stringify([
        infos, state.edges, state.jack, state.client, [...nodes.values()].map((n) => [...n.params.keys()]),
      ]);
      if (signature !== graphRefresh.signature) {
        graphRefresh.signature = signature;
        renderAll();
      } else {
        for (const node of nodes.values()) {
          showPlaying(node);
          showVolume(node);
        }
        updateScenes();
      }
      updateListening();
      graphRefresh.retryDelay = 1000;
    } catch (error) {
      console.warn("graph refresh failed:", error.message);
      if (state.connected) {
        clearTimeout(graphRefresh.timer);
        graphRefresh.timer = setTimeout(refreshGraph, graphRefresh.retryDelay);
        graphRefresh.retryDelay = Math.min(graphRefresh.retryDelay * 2, 8000);
      }
    } finally {
      graphRefresh.running = false;
      if (graphRefresh.again) {
        graphRefresh.again = false;
        scheduleGraphRefresh();
      }
    }
  }

  /// `node:bus` with a numeric bus, else nil (a JACK port name).
  function splitEndpoint(text) {
    const match = /^(.*):(\d+)$/.exec(String(text));
    return match ? { node: match[1], bus: Number(match[2]) } : null;
  }

  /// Reads a node's parameters (types, ranges, access, current values) from its OSCQuery subtree.
  async function loadParameters(node) {
    try {
      const response = await fetch(`/node/${encodeURIComponent(node.name)}`, {
        headers: { Accept: "application/json" },
        cache: "no-store",
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const tree = await response.json();
      const params = new Map();
      for (const [key, entry] of Object.entries(parameterEntries(tree, node.name))) {
        if (!entry || entry.TYPE === undefined) continue;
        const range = Array.isArray(entry.RANGE) ? entry.RANGE[0] || {} : entry.RANGE || {};
        params.set(key, { type: entry.TYPE, min: range.MIN, max: range.MAX, access: entry.ACCESS ?? 3 });
        if (Array.isArray(entry.VALUE) && entry.VALUE.length > 0) node.values[key] = entry.VALUE[0];
      }
      if (tree.KIND && !node.kind) node.kind = tree.KIND;
      node.params = params;
      node.loaded = true;
    } catch (error) {
      console.warn(`parameters of ${node.name}:`, error.message);
    }
  }

  /// The parameter entries of a node's OSCQuery answer: its CONTENTS, or, should the answer nest the
  /// whole path again (`CONTENTS.node.CONTENTS.<name>`), the CONTENTS found down that path.
  function parameterEntries(tree, name) {
    const contents = tree.CONTENTS || {};
    if (Object.values(contents).some((entry) => entry && entry.TYPE !== undefined)) return contents;
    const nested = contents.node?.CONTENTS?.[name]?.CONTENTS;
    return nested || contents;
  }

  function receiveValue(nodeName, param, value) {
    const node = state.nodes.get(nodeName);
    if (!node) return;
    node.values[param] = value;
    if (param === "playing") showPlaying(node);
    else if (param === "volume") showVolume(node);
    else if (/^(position[XZ]|listener(X|Z|Yaw))$/.test(param)) updateScenes();
  }

  function updateListening() {
    const wanted = new Set();
    for (const node of state.nodes.values()) {
      if (isPlayer(node.kind)) wanted.add(`/node/${node.name}/playing`);
      if (node.params.has("volume")) wanted.add(`/node/${node.name}/volume`);
      if (node.kind === "environment") {
        for (const p of ["listenerX", "listenerZ", "listenerYaw"]) wanted.add(`/node/${node.name}/${p}`);
        for (const source of sourcesOf(node.name)) {
          for (const p of ["positionX", "positionZ"]) wanted.add(`/node/${source}/${p}`);
        }
      }
    }
    for (const path of link.listening) {
      if (!wanted.has(path)) {
        sendText({ COMMAND: "IGNORE", DATA: path });
        link.listening.delete(path);
      }
    }
    for (const path of wanted) {
      if (!link.listening.has(path)) {
        sendText({ COMMAND: "LISTEN", DATA: path });
        link.listening.add(path);
      }
    }
  }

  function sourcesOf(environment) {
    const names = state.edges.filter((e) => e.to === environment).map((e) => e.from);
    return [...new Set(names)].sort();
  }

  function renderAll() {
    renderGraph();
    renderStrips();
    renderScenes();
    setReadOnly(state.readOnly);
  }

  // ---------------------------------------------------------------------------------------------
  // The graph picture: a layered layout, columns by depth from the sinks (the output on the right)

  const BOX = { w: 148, h: 46, port: 30, column: 200, row: 66, margin: 24 };

  /// Which of our nodes a port of our JACK client belongs to (out_N: the output, in_N: an input node,
  /// <node>_…: that node), or nil.
  function portOwner(shortName) {
    const byKind = (kind) => [...state.nodes.values()].find((n) => n.kind === kind)?.name;
    if (/^out_\d+$/.test(shortName)) return byKind("output");
    if (/^in_\d+$/.test(shortName)) return byKind("input");
    let best = null;
    for (const name of state.nodes.keys()) {
      if (shortName.startsWith(name + "_") && (!best || name.length > best.length)) best = name;
    }
    return best;
  }

  function buildLayout() {
    const vertices = new Map(); // id → { id, label, kind, sub, node? }
    const links = []; // { from, to, type: "audio"|"jack", label }
    for (const node of state.nodes.values()) {
      vertices.set("n:" + node.name, { id: "n:" + node.name, label: node.name, kind: node.kind, node });
    }
    for (const e of state.edges) {
      const label = e.fromBus || e.toBus ? `${e.fromBus}→${e.toBus}` : "";
      links.push({ from: "n:" + e.from, to: "n:" + e.to, type: "audio", label });
    }
    const mine = (port) => state.client && port.startsWith(state.client + ":");
    const endpoint = (port) => {
      if (mine(port)) {
        const short = port.slice(state.client.length + 1);
        const owner = portOwner(short);
        if (owner && vertices.has("n:" + owner)) return { id: "n:" + owner, label: short };
        const id = "p:" + port;
        if (!vertices.has(id)) vertices.set(id, { id, label: short, kind: "jack", sub: "our port", port });
        return { id, label: "" };
      }
      const id = "p:" + port;
      const colon = port.indexOf(":");
      if (!vertices.has(id)) {
        vertices.set(id, {
          id, kind: "jack", port,
          label: colon >= 0 ? port.slice(colon + 1) : port,
          sub: colon >= 0 ? port.slice(0, colon) : "JACK",
        });
      }
      return { id, label: "" };
    };
    for (const j of state.jack) {
      const a = endpoint(j.source);
      const b = endpoint(j.destination);
      links.push({ from: a.id, to: b.id, type: "jack", label: [a.label, b.label].filter(Boolean).join(" → ") });
    }

    // Depth: the longest path to a sink (cycles, which the engine refuses, are cut).
    const outgoing = new Map([...vertices.keys()].map((id) => [id, []]));
    for (const l of links) if (l.from !== l.to) outgoing.get(l.from)?.push(l.to);
    const depth = new Map();
    const visiting = new Set();
    const depthOf = (id) => {
      if (depth.has(id)) return depth.get(id);
      if (visiting.has(id)) return 0;
      visiting.add(id);
      let d = 0;
      for (const next of outgoing.get(id) || []) d = Math.max(d, depthOf(next) + 1);
      visiting.delete(id);
      depth.set(id, d);
      return d;
    };
    for (const id of vertices.keys()) depthOf(id);
    const maxDepth = Math.max(0, ...depth.values());

    // Columns left to right; rows ordered by the mean row of what they feed, then by name.
    const columns = [];
    for (const [id, d] of depth) (columns[maxDepth - d] ||= []).push(id);
    const row = new Map();
    for (let c = columns.length - 1; c >= 0; c--) {
      const column = columns[c] || [];
      const key = (id) => {
        const rows = (outgoing.get(id) || []).filter((t) => row.has(t)).map((t) => row.get(t));
        return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : Infinity;
      };
      column.sort((a, b) => key(a) - key(b) || vertices.get(a).label.localeCompare(vertices.get(b).label));
      column.forEach((id, i) => row.set(id, i));
    }
    const tallest = Math.max(1, ...columns.map((c) => (c || []).length));
    for (const [c, column] of columns.entries()) {
      const offset = ((tallest - (column || []).length) * BOX.row) / 2;
      for (const [i, id] of (column || []).entries()) {
        const v = vertices.get(id);
        const height = v.kind === "jack" ? BOX.port : BOX.h;
        v.x = BOX.margin + c * BOX.column;
        v.y = BOX.margin + offset + i * BOX.row + (BOX.h - height) / 2;
        v.w = BOX.w;
        v.h = height;
      }
    }
    return {
      vertices, links,
      width: BOX.margin * 2 + (columns.length - 1) * BOX.column + BOX.w,
      height: BOX.margin * 2 + (tallest - 1) * BOX.row + BOX.h + 8,
    };
  }

  function shapePath(shape, w, h) {
    const r = Math.min(10, h / 2);
    switch (shape) {
      case "pill":
        return `M${h / 2},0 H${w - h / 2} A${h / 2},${h / 2} 0 0 1 ${w - h / 2},${h} H${h / 2} A${h / 2},${h / 2} 0 0 1 ${h / 2},0 Z`;
      case "hexagon":
        return `M14,0 H${w - 14} L${w},${h / 2} L${w - 14},${h} H14 L0,${h / 2} Z`;
      case "arrowOut":
        return `M0,0 H${w - 16} L${w},${h / 2} L${w - 16},${h} H0 Z`;
      case "arrowIn":
        return `M0,0 H${w} V${h} H0 L16,${h / 2} Z`;
      case "effect":
        return `M${r},0 H${w - r} Q${w},0 ${w},${r} V${h - r} Q${w},${h} ${w - r},${h} H${r} Q0,${h} 0,${h - r} V${r} Q0,0 ${r},0 Z`;
      case "port":
        return `M${h / 2},0 H${w - h / 2} A${h / 2},${h / 2} 0 0 1 ${w - h / 2},${h} H${h / 2} A${h / 2},${h / 2} 0 0 1 ${h / 2},0 Z`;
      default:
        return `M3,0 H${w - 3} Q${w},0 ${w},3 V${h - 3} Q${w},${h} ${w - 3},${h} H3 Q0,${h} 0,${h - 3} V3 Q0,0 3,0 Z`;
    }
  }

  function renderGraph() {
    const layout = buildLayout();
    const svg = $("graph");
    svg.replaceChildren();
    svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
    svg.setAttribute("width", layout.width);
    svg.setAttribute("height", layout.height);
    const defs = s("defs", {},
      s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-audio" })),
      s("marker", { id: "arrow-jack", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-jack" })));
    svg.append(defs);

    const edgeLayer = s("g", { class: "edges" });
    const labelLayer = s("g", { class: "edge-labels" });
    for (const l of layout.links) {
      const a = layout.vertices.get(l.from);
      const b = layout.vertices.get(l.to);
      if (!a || !b) continue;
      const x1 = a.x + a.w;
      const y1 = a.y + a.h / 2;
      const x2 = b.x;
      const y2 = b.y + b.h / 2;
      let d;
      if (x2 > x1) {
        const bend = Math.max(30, (x2 - x1) / 2);
        d = `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2 - 2},${y2}`;
      } else {
        // Back to an earlier column (a JACK loop through an insert): around below.
        const below = Math.max(a.y + a.h, b.y + b.h) + 28;
        d = `M${x1},${y1} C${x1 + 60},${below} ${x2 - 60},${below} ${x2 - 2},${y2}`;
      }
      edgeLayer.append(s("path", {
        d, class: `edge edge-${l.type}`, "marker-end": `url(#${l.type === "jack" ? "arrow-jack" : "arrow"})`,
        "data-edge": `${l.from.slice(2)}>${l.to.slice(2)}`,
      }));
      if (l.label && l.type === "audio") {
        // Buses, by the arrow's head.
        labelLayer.append(s("text", { x: x2 - 12, y: y2 - 8, class: "edge-label", "text-anchor": "end" }, l.label));
      } else if (l.label) {
        const mx = (x1 + x2) / 2;
        const my = x2 > x1 ? (y1 + y2) / 2 - 5 : Math.max(a.y + a.h, b.y + b.h) + 18;
        labelLayer.append(s("text", { x: mx, y: my, class: "edge-label", "text-anchor": "middle" }, l.label));
      }
    }
    svg.append(edgeLayer);

    const nodeLayer = s("g", { class: "nodes" });
    for (const v of layout.vertices.values()) {
      const info = kindInfo(v.kind);
      const isNode = Boolean(v.node);
      const group = s("g", {
        transform: `translate(${v.x},${v.y})`,
        class: `vertex ${isNode ? "node" : "port"}${isNode && !v.node.active ? " inactive" : ""}`,
        "data-graph-node": isNode ? v.node.name : null,
        "data-port": isNode ? null : v.port,
        "data-kind": v.kind,
      });
      group.append(s("title", {}, isNode ? `${v.node.name}: ${v.kind}, ${v.node.channels} ch${v.node.active ? "" : ", not reaching the output"}` : v.port));
      group.append(s("path", { d: shapePath(info.shape, v.w, v.h), class: "shape", style: `--kind:${info.color}` }));
      if (isNode) {
        group.append(s("rect", { x: info.shape === "pill" ? v.h / 2 - 6 : 6, y: 8, width: 4, height: v.h - 16, rx: 2, fill: info.color }));
        const textX = info.shape === "pill" ? v.h / 2 + 4 : info.shape === "arrowIn" ? 22 : 16;
        group.append(s("text", { x: textX, y: 19, class: "node-name" }, v.node.name));
        group.append(s("text", { x: textX, y: 34, class: "node-kind" }, `${v.kind} · ${v.node.channels} ch`));
        const level = s("rect", { x: textX, y: v.h - 7, width: 0, height: 3, rx: 1.5, class: "node-level", "data-graph-meter": v.node.name });
        group.append(level);
      } else {
        group.append(s("text", { x: v.h / 2, y: 12, class: "port-client" }, v.sub));
        group.append(s("text", { x: v.h / 2, y: 24, class: "port-name" }, v.label));
      }
      nodeLayer.append(group);
    }
    svg.append(nodeLayer, labelLayer);
    graphLevelElements.clear();
    for (const rect of svg.querySelectorAll("[data-graph-meter]")) graphLevelElements.set(rect.dataset.graphMeter, rect);

    const nodeCount = state.nodes.size;
    $("graph-summary").textContent =
      `${nodeCount} node${nodeCount === 1 ? "" : "s"} · ${state.edges.length} connection${state.edges.length === 1 ? "" : "s"} · ${state.jack.length} JACK`;
    const kinds = [...new Set([...layout.vertices.values()].map((v) => v.kind))].sort();
    $("legend").replaceChildren(...kinds.map((k) => h("span", { class: "legend-item" },
      h("span", { class: "swatch", style: `background:${kindInfo(k).color}` }), k === "jack" ? "JACK port" : k)));
  }

  // ---------------------------------------------------------------------------------------------
  // Node strips: meter, transport, volume

  const meterElements = new Map(); // name → { root, channels: [{ rms, peak, hold }], readout }
  const graphLevelElements = new Map();
  const ICONS = {
    play: "M4,2 L14,8 L4,14 Z",
    pause: "M3,2 H7 V14 H3 Z M9,2 H13 V14 H9 Z",
    stop: "M3,3 H13 V13 H3 Z",
  };

  function renderStrips() {
    const container = $("strips");
    const names = [...state.nodes.keys()].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
    meterElements.clear();
    container.replaceChildren(...names.map((name) => strip(state.nodes.get(name))));
    for (const name of names) showMeter(name, state.meters.get(name) || null);
  }

  /// Players first, then effects and mixers, the output last.
  function order(name) {
    const kind = state.nodes.get(name).kind;
    if (isPlayer(kind)) return 0;
    if (kind === "input") return 1;
    if (kind === "output") return 4;
    if (kind === "mixer") return 3;
    return 2;
  }

  function strip(node) {
    const info = kindInfo(node.kind);
    const channels = Math.max(1, Math.min(8, node.channels || 2));
    const meter = h("div", { class: "meter", "data-meter": node.name, "data-peak": "-160", "data-rms": "-160" });
    const bars = [];
    for (let c = 0; c < channels; c++) {
      const rms = h("div", { class: "rms" });
      const peak = h("div", { class: "peak" });
      const hold = h("div", { class: "hold" });
      meter.append(h("div", { class: "channel" }, peak, rms, hold));
      bars.push({ rms, peak, hold, held: -160, heldAt: 0 });
    }
    const readout = h("span", { class: "readout", "data-readout": node.name }, "−∞");
    meterElements.set(node.name, { root: meter, channels: bars, readout });

    const head = h("div", { class: "strip-head" },
      h("span", { class: "swatch", style: `background:${info.color}` }),
      h("span", { class: "strip-name" }, node.name),
      h("span", { class: "strip-kind" }, node.kind),
      isPlayer(node.kind) ? h("span", { class: "play-state", "data-playing": node.name }) : null,
      readout);

    const controls = h("div", { class: "controls" });
    if (isPlayer(node.kind)) {
      for (const action of ["play", "pause", "stop"]) {
        controls.append(h("button", {
          type: "button", class: `transport ${action}`, title: `${action} ${node.name}`,
          "aria-label": `${action} ${node.name}`, "data-node": node.name, "data-action": action,
          onclick: () => transport(node.name, action),
        }, svgIcon(ICONS[action])));
      }
    }
    const volume = node.params.get("volume");
    if (volume) {
      const value = Number(node.values.volume ?? 1);
      const output = h("output", { class: "volume-value", "data-volume-value": node.name }, value.toFixed(2));
      const writable = (volume.access & 2) !== 0;
      const fader = h("input", {
        type: "range", class: "fader", min: volume.min ?? 0, max: volume.max ?? 1, step: "0.01", value,
        "data-node": node.name, "data-param": "volume", "aria-label": `volume of ${node.name}`,
        disabled: !writable || state.readOnly,
        title: writable ? `volume of ${node.name}` : "read-only",
      });
      fader.addEventListener("input", () => {
        fader.dataset.dragging = String(Date.now());
        output.textContent = Number(fader.value).toFixed(2);
        node.values.volume = Number(fader.value);
        send(`/node/${node.name}/volume`, Number(fader.value));
      });
      controls.append(h("label", { class: "volume" }, h("span", { class: "muted small" }, "vol"), fader, output));
    }
    const element = h("div", { class: "strip", "data-strip": node.name, "data-kind": node.kind },
      head, meter, controls.childNodes.length ? controls : null);
    if (!node.active) element.classList.add("inactive");
    queueMicrotask(() => showPlaying(node));
    return element;
  }

  function svgIcon(path) {
    return s("svg", { viewBox: "0 0 16 16", width: 14, height: 14, "aria-hidden": "true" }, s("path", { d: path }));
  }

  function transport(name, action) {
    send(`/node/${name}/${action}`);
  }

  function showPlaying(node) {
    const label = document.querySelector(`[data-playing="${CSS.escape(node.name)}"]`);
    if (!label) return;
    const playing = node.values.playing === true || node.values.playing === 1;
    label.textContent = playing ? "playing" : "stopped";
    label.dataset.state = playing ? "playing" : "stopped";
    label.closest(".strip")?.classList.toggle("is-playing", playing);
  }

  function showVolume(node) {
    const fader = document.querySelector(`input[data-node="${CSS.escape(node.name)}"][data-param="volume"]`);
    if (!fader) return;
    if (Date.now() - Number(fader.dataset.dragging || 0) < 500) return;
    const value = Number(node.values.volume);
    fader.value = String(value);
    const output = document.querySelector(`[data-volume-value="${CSS.escape(node.name)}"]`);
    if (output) output.textContent = value.toFixed(2);
  }

  function receiveMeter(args) {
    const [name, channels] = args;
    const count = Number(channels) || 0;
    const peaks = args.slice(2, 2 + count).map(Number);
    const rms = args.slice(2 + count, 2 + 2 * count).map(Number);
    const reading = { peaks, rms, at: performance.now() };
    state.meters.set(name, reading);
    showMeter(name, reading);
  }

  const dbToPercent = (db) => clamp(((db + 60) / 60) * 100, 0, 100);

  function showMeter(name, reading) {
    const element = meterElements.get(name);
    const peaks = reading ? reading.peaks : [];
    const maxPeak = peaks.length ? Math.max(...peaks) : -160;
    const maxRms = reading && reading.rms.length ? Math.max(...reading.rms) : -160;
    const level = graphLevelElements.get(name);
    if (level) level.setAttribute("width", String((dbToPercent(maxPeak) / 100) * 110));
    if (!element) return;
    element.root.dataset.peak = String(round(maxPeak, 2));
    element.root.dataset.rms = String(round(maxRms, 2));
    element.root.classList.toggle("stale", !reading);
    const now = performance.now();
    element.channels.forEach((bar, i) => {
      const peak = reading ? (peaks[i] ?? peaks[0] ?? -160) : -160;
      const rms = reading ? (reading.rms[i] ?? reading.rms[0] ?? -160) : -160;
      bar.peak.style.clipPath = `inset(0 ${100 - dbToPercent(peak)}% 0 0)`;
      bar.rms.style.clipPath = `inset(0 ${100 - dbToPercent(rms)}% 0 0)`;
      if (peak >= bar.held || now - bar.heldAt > 1500) {
        bar.held = peak;
        bar.heldAt = now;
      }
      bar.hold.style.left = `calc(${dbToPercent(bar.held)}% - 1px)`;
      bar.hold.classList.toggle("clip", bar.held >= -0.1);
    });
    element.readout.textContent = maxPeak <= -159 ? "−∞" : `${maxPeak.toFixed(1)} dB`;
  }

  // ---------------------------------------------------------------------------------------------
  // 3D top views: x across, z down the page (−z, ahead of the default listener, is up)

  const SCENE = { size: 300, margin: 22 };
  const sceneElements = new Map(); // environment → { svg, extent, grid, listener, sources: Map }

  function renderScenes() {
    const container = $("scenes");
    const environments = [...state.nodes.values()].filter((n) => n.kind === "environment").map((n) => n.name).sort();
    sceneElements.clear();
    if (environments.length === 0) {
      container.replaceChildren(h("p", { class: "muted" }, "No environment node."));
      return;
    }
    container.replaceChildren(...environments.map((name) => {
      const svg = s("svg", {
        class: "scene", "data-scene": name, viewBox: `0 0 ${SCENE.size} ${SCENE.size}`,
        width: SCENE.size, height: SCENE.size, role: "img", "aria-label": `top view of ${name}`,
      });
      const figure = h("figure", { class: "scene-figure" }, svg,
        h("figcaption", {}, h("b", {}, name), h("span", { class: "muted small", "data-scene-scale": name })));
      sceneElements.set(name, { svg, extent: 0 });
      return figure;
    }));
    updateScenes();
  }

  const value = (node, key) => Number(node?.values[key] ?? 0) || 0;

  function niceExtent(needed) {
    let extent = 10;
    while (extent < needed) extent *= 2;
    return extent;
  }

  function updateScenes() {
    for (const [name, scene] of sceneElements) {
      const env = state.nodes.get(name);
      const sources = sourcesOf(name).map((n) => state.nodes.get(n)).filter(Boolean);
      const listener = { x: value(env, "listenerX"), z: value(env, "listenerZ"), yaw: value(env, "listenerYaw") };
      const points = [listener, ...sources.map((n) => ({ x: value(n, "positionX"), z: value(n, "positionZ") }))];
      const needed = Math.max(...points.map((p) => Math.max(Math.abs(p.x), Math.abs(p.z)))) * 1.15;
      const extent = niceExtent(needed);
      if (extent !== scene.extent || !scene.sources || scene.sourceNames !== sources.map((n) => n.name).join(",")) {
        drawScene(name, scene, extent, sources);
      }
      const scale = (SCENE.size / 2 - SCENE.margin) / extent;
      const px = (x) => round(SCENE.size / 2 + x * scale, 2);
      scene.listener.setAttribute("transform", `translate(${px(listener.x)},${px(listener.z)}) rotate(${listener.yaw})`);
      setAttrs(scene.listener, { "data-x": listener.x, "data-z": listener.z, "data-yaw": listener.yaw });
      for (const node of sources) {
        const marker = scene.sources.get(node.name);
        if (!marker) continue;
        const x = value(node, "positionX");
        const z = value(node, "positionZ");
        setAttrs(marker.dot, { cx: px(x), cy: px(z), "data-x": x, "data-z": z });
        setAttrs(marker.label, { x: px(x) + 10, y: px(z) + 4 });
        const playing = node.values.playing === true;
        marker.dot.classList.toggle("is-playing", playing);
      }
    }
  }

  function drawScene(name, scene, extent, sources) {
    const svg = scene.svg;
    svg.replaceChildren();
    scene.extent = extent;
    const size = SCENE.size;
    const half = size / 2;
    const scale = (half - SCENE.margin) / extent;
    const step = extent / 5;
    const grid = s("g", { class: "scene-grid" });
    for (let i = -5; i <= 5; i++) {
      const p = half + i * step * scale;
      grid.append(s("line", { x1: SCENE.margin, y1: p, x2: size - SCENE.margin, y2: p, class: i === 0 ? "axis" : "" }));
      grid.append(s("line", { x1: p, y1: SCENE.margin, x2: p, y2: size - SCENE.margin, class: i === 0 ? "axis" : "" }));
    }
    for (let r = step; r <= extent + 1e-9; r += step) {
      grid.append(s("circle", { cx: half, cy: half, r: r * scale, class: "ring" }));
    }
    grid.append(s("text", { x: half, y: 14, class: "scene-label", "text-anchor": "middle" }, "ahead (−z)"));
    grid.append(s("text", { x: size - 4, y: half - 6, class: "scene-label", "text-anchor": "end" }, "+x"));
    grid.append(s("text", { x: size - SCENE.margin, y: size - 6, class: "scene-label", "text-anchor": "end" }, `±${extent} m, grid ${step} m`));
    svg.append(grid);

    const listener = s("g", { class: "listener", "data-listener": name },
      s("path", { d: "M0,0 L-34,-59 A68,68 0 0 1 34,-59 Z", class: "facing" }),
      s("path", { d: "M0,-19 L7,-8 L-7,-8 Z", class: "nose" }),
      s("circle", { r: 10, class: "head" }),
      s("circle", { cx: -10, cy: 0, r: 3.5, class: "ear" }),
      s("circle", { cx: 10, cy: 0, r: 3.5, class: "ear" }));
    listener.append(s("title", {}, `listener of ${name}`));
    svg.append(listener);
    scene.listener = listener;
    scene.sources = new Map();
    for (const node of sources) {
      const color = kindInfo(node.kind).color;
      const dot = s("circle", { r: 7, class: "source", "data-source": node.name, fill: color, cx: half, cy: half });
      dot.append(s("title", {}, `${node.name} (${node.kind})`));
      const label = s("text", { class: "source-label", x: half, y: half }, node.name);
      svg.append(dot, label);
      scene.sources.set(node.name, { dot, label });
    }
    scene.sourceNames = sources.map((n) => n.name).join(",");
    const caption = document.querySelector(`[data-scene-scale="${CSS.escape(name)}"]`);
    if (caption) caption.textContent = ` · ${sources.length} source${sources.length === 1 ? "" : "s"} · ±${extent} m`;
  }

  // ---------------------------------------------------------------------------------------------
  // Session and notifications

  let sessionTimer = 0;

  function scheduleSessionRefresh() {
    clearTimeout(sessionTimer);
    sessionTimer = setTimeout(refreshSession, 150);
  }

  function refreshSession() {
    send("/session/state");
    send("/session/params");
  }

  function showSessionState(text) {
    const pill = $("session-state");
    pill.textContent = text;
    pill.dataset.sessionState = text;
    pill.className = "pill " + (text === "active" ? "good" : text === "interrupted" || text === "suspended" ? "warn" : "");
  }

  function showSessionParams(args) {
    const rows = [];
    for (let i = 0; i + 1 < args.length; i += 2) {
      rows.push(h("tr", { "data-session-param": args[i] }, h("th", {}, args[i]), h("td", {}, formatArg(args[i + 1]).replace(/^"(.*)"$/, "$1"))));
    }
    $("session-params").replaceChildren(...rows);
  }

  function receiveStatus(args) {
    const [status, rate, period, dsp, xruns, , server, client] = args;
    if (client) state.client = String(client);
    const parts = [
      status,
      rate ? `${(rate / 1000).toFixed(rate % 1000 ? 1 : 0)} kHz` : null,
      period ? `${period} frames` : null,
      typeof dsp === "number" ? `DSP ${dsp.toFixed(1)} %` : null,
      typeof xruns === "number" && xruns >= 0 ? `${xruns} xruns` : null,
      client ? `JACK ${client}@${server}` : null,
    ].filter(Boolean);
    $("engine").textContent = parts.join(" · ");
  }

  setInterval(() => send("/status"), 2000);

  const notifications = [];

  function addNotification(address, args, type = "") {
    notifications.unshift({ time: clock(), address, args, type });
    notifications.length = Math.min(notifications.length, 20);
    $("notifications").replaceChildren(...notifications.map((n) =>
      h("li", { class: n.type, "data-notification": n.address },
        h("time", {}, n.time), h("code", {}, n.address), h("span", { class: "args" }, n.args.map(formatArg).join(" ")))));
  }

  window.soundstageView = {
    state,
    send,
    get meterUpdates() {
      return state.meterUpdates;
    },
  };
  connect();
})();
