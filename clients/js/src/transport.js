// The WebSocket to the hub: one at a time, given up when silent, opened again after each drop.

import { CloseCodes, ReconnectSchedule } from "./reconnect-schedule.js";
import { LinkLiveness } from "./link-liveness.js";

/** The WebSocket subprotocol of protocol v1 (docs/protocol.md): offered, and echoed by the hub. */
const SUBPROTOCOL = "pushhub.v1";

/**
 * The link to a hub, kept up until `stop()`: one WebSocket at a time, given up at once when
 * nothing arrived past `LinkLiveness`'s limit, and after each drop opened again on the
 * `ReconnectSchedule` (or at once when the browser reports it is back `online`). It knows
 * nothing of the protocol: its `client` prepares each connection (`reconnect()` → `begin()` …
 * `connect()`), reads each message, and decides after each drop whether to go on
 * (`reconnectLater`) or not (`stop`).
 *
 * `client` is `{ reconnect(), opened(), received(data, generation), dropped(code, reason),
 * connectFailed(error) }`; `stats.connects` and `stats.deadLinks` are counted here.
 *
 * Invariants: at most one socket, named by `generation`, which grows with every attempt and
 * every drop, so events (and the client's queued work) of an older socket are recognised and
 * ignored; at most one liveness timer and one reconnect timer; nothing opens after `stop()`.
 */
export class Transport {
  constructor({ url, WebSocket, now, random, backoff, stats }, client) {
    this.url = url;
    this._WebSocket = WebSocket;
    this._now = now;
    this._random = random;
    this._stats = stats;
    this._client = client;
    this._schedule = new ReconnectSchedule(backoff);
    this._liveness = new LinkLiveness();
    /** The WebSocket in use (null between connections). */
    this.socket = null;
    this.generation = 0;
    this._stopped = false;
    this._livenessTimer = null;
    this._reconnectTimer = null;
    this._online = () => this._reconnectTimer && this.reconnectNow();
    if (typeof globalThis.addEventListener === "function") globalThis.addEventListener("online", this._online);
  }

  /** A connection attempt starts: what belongs to older sockets is void from now on. Returns its generation. */
  begin() {
    return ++this.generation;
  }

  /** Whether `generation` is the current attempt (and the transport not stopped). */
  isCurrent(generation) {
    return generation === this.generation && !this._stopped;
  }

  /** Opens the WebSocket of `generation` (from `begin()`, still current). */
  connect(generation) {
    let socket;
    this._stats.connects++;
    try {
      socket = new this._WebSocket(this.url, SUBPROTOCOL);
    } catch (error) {
      this._client.connectFailed(error);
      return this._drop(generation, CloseCodes.abnormal, String(error));
    }
    this.socket = socket;
    this._liveness.connecting(this._now());
    this._armLivenessCheck(generation);
    socket.onopen = () => {
      if (generation === this.generation) this._client.opened();
    };
    socket.onmessage = (event) => {
      if (generation !== this.generation) return;
      this._liveness.heard(this._now());
      this._client.received(event.data, generation);
    };
    socket.onclose = (event) => this._drop(generation, event.code, event.reason);
    socket.onerror = () => {}; // a close event follows, with its code
  }

  /** Sends `message` as JSON text; false when there is no open socket. */
  send(message) {
    if (!this.socket || this.socket.readyState !== 1) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** The hub welcomed this connection: the schedule starts over, the link is watched at the hub's heartbeat (if it sends them). */
  welcomed(heartbeatS, hubSendsHeartbeats) {
    this._schedule.welcomed();
    if (this._liveness.welcomed(heartbeatS, hubSendsHeartbeats, this._now())) this._armLivenessCheck(this.generation);
  }

  /** After a drop: reconnects after the schedule's next delay. Returns `{ delayMs, attempt }`. */
  reconnectLater(code) {
    const delayMs = this._schedule.dropped(code, this._now(), this._random());
    this._reconnectTimer = setTimeout(() => this.reconnectNow(), delayMs);
    return { delayMs, attempt: this._schedule.attempt };
  }

  /** Reconnects without waiting out the delay. */
  reconnectNow() {
    clearTimeout(this._reconnectTimer);
    this._reconnectTimer = null;
    if (!this._stopped) this._client.reconnect();
  }

  /** Replaces the socket at once (the next hello must say what the old one's did not): the old one is closed with 1000, its events ignored. */
  restart() {
    if (this._stopped) return;
    const socket = this.socket;
    this.socket = null;
    this.generation++;
    clearTimeout(this._reconnectTimer);
    clearTimeout(this._livenessTimer);
    this._reconnectTimer = this._livenessTimer = null;
    this._liveness.closed();
    if (socket) {
      try { socket.close(CloseCodes.normal); } catch {}
    }
    this._client.reconnect();
  }

  /** For good: the timers go, the socket (if any) is closed with 1000 and its events ignored. */
  stop() {
    if (this._stopped) return;
    this._stopped = true;
    this.generation++;
    clearTimeout(this._reconnectTimer);
    clearTimeout(this._livenessTimer);
    this._reconnectTimer = this._livenessTimer = null;
    this._liveness.closed();
    if (typeof globalThis.removeEventListener === "function") globalThis.removeEventListener("online", this._online);
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      try { socket.close(CloseCodes.normal); } catch {}
    }
  }

  /** The socket of `generation` is gone (closed, never made, or given up): the client hears of it once. */
  _drop(generation, code, reason) {
    if (!this.isCurrent(generation)) return;
    this.generation++; // drops what the old socket had queued
    clearTimeout(this._livenessTimer);
    this._liveness.closed();
    this.socket = null;
    this._client.dropped(code, reason);
  }

  /** One timer for the liveness deadline of `generation` (none while the link is not watched). */
  _armLivenessCheck(generation) {
    clearTimeout(this._livenessTimer);
    const deadline = this._liveness.deadline;
    if (deadline === undefined) return;
    this._livenessTimer = setTimeout(() => this._checkLink(generation), Math.max(0, deadline - this._now()));
  }

  /** The liveness timer fired: a silent socket is given up at once, else the check is armed again. */
  _checkLink(generation) {
    if (generation !== this.generation) return;
    const now = this._now();
    if (!this._liveness.isDead(now)) return this._armLivenessCheck(generation);
    this._stats.deadLinks++;
    const socket = this.socket;
    const silence = (this._liveness.silenceMs(now) / 1000).toFixed(1);
    this._drop(generation, CloseCodes.abnormal,
      `nothing from the hub for ${silence} s (heartbeat every ${this._liveness.heartbeatS} s): the link is dead`);
    if (socket) {
      // Stop using it at once: its events are ignored (old generation), no close handshake awaited.
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      try { socket.close(); } catch {}
    }
  }
}
