"use strict";
// Draws the selected channel from the JSON blob, on demand, and fills a
// channel's userRanks when it is opened. Strings from the dumps are only
// ever set as textContent, never parsed as markup.
(function () {
  var t0 = performance.now();
  var NS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("data").textContent);
  var svg = document.getElementById("picture");
  var select = document.getElementById("channel");
  var note = document.getElementById("channel-note");
  var E = 7; // ints per edge (report.EdgeInts)

  // marks[rank] = [[channel, finding index], ...]
  var marks = {};
  for (var i = 0; i < data.marks.length; i += 3) {
    var r = data.marks[i];
    (marks[r] = marks[r] || []).push([data.marks[i + 1], data.marks[i + 2]]);
  }
  function markedOn(r, c) {
    var m = marks[r];
    if (!m) return false;
    for (var k = 0; k < m.length; k++) if (m[k][0] === c || m[k][0] === -1) return true;
    return false;
  }

  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function title(e, text) { e.appendChild(el("title", {}, text)); return e; }
  function hostOf(m) { return data.host[m] || "?"; }
  function nic(d) { return d < 0 ? "?" : String(d); }

  var classes = ["l0", "l1", "l2", "l3", "lu"];
  // The arrowheads' fills, as the stylesheet colours the lines.
  var colours = { l0: "#4a7ab8", l1: "#d62728", l2: "#ff7f0e", l3: "#9467bd", lu: "#999" };
  function edgeClass(e, k) {
    if (!data.loc[e[k]] || !data.loc[e[k + 1]]) return "lu";
    return classes[Math.min(e[k + 6], 3)];
  }

  // The group picture: the level's groups on a circle (two: side by
  // side), each arrow a curve bent to the right of its direction so that
  // a -> b and b -> a stay apart. The counts are Go's (report.GroupLevels).
  var levelSel = document.getElementById("level");
  var gsvg = document.getElementById("groups");
  var gnote = document.getElementById("group-note");
  var BW = 120, BH = 34; // a group's box
  var P = 4; // ints per pair (report.PairInts)
  function drawGroups(c) {
    if (!gsvg) return;
    var tier = data.tiers[+levelSel.value], n = tier.names.length;
    var R = Math.max(110, n * (BW + 20) / (2 * Math.PI));
    // Two groups sit on one line: no need for the circle's height.
    var W = 2 * R + BW + 40, H = n === 2 ? BH + 80 : 2 * R + BH + 40;
    var px = [], py = [];
    for (var g = 0; g < n; g++) {
      var angle = Math.PI + 2 * Math.PI * g / n;
      px.push(W / 2 + R * Math.cos(angle));
      py.push(H / 2 + R * Math.sin(angle));
    }
    var frag = document.createDocumentFragment();
    var defs = el("defs", {});
    [["garrow", "#4a7ab8"], ["garrow-over", "#d62728"]].forEach(function (m) {
      var mk = el("marker", { id: m[0], viewBox: "0 0 10 10", refX: "10", refY: "5",
        markerWidth: "5", markerHeight: "5", orient: "auto-start-reverse" });
      mk.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: m[1] }));
      defs.appendChild(mk);
    });
    frag.appendChild(defs);
    for (g = 0; g < n; g++) {
      var name = tier.names[g] || "no location";
      frag.appendChild(title(el("rect", { "class": "box", x: px[g] - BW / 2, y: py[g] - BH / 2, width: BW, height: BH }),
        name + ": " + tier.nodes[g] + (tier.nodes[g] === 1 ? " node" : " nodes")));
      // Long names are cut here; the box's title holds the whole.
      frag.appendChild(el("text", { x: px[g] - BW / 2 + 4, y: py[g] - 3 }, name.length > 20 ? "\u2026" + name.slice(-19) : name));
      frag.appendChild(el("text", { x: px[g] - BW / 2 + 4, y: py[g] + 11 }, tier.nodes[g] + (tier.nodes[g] === 1 ? " node" : " nodes")));
    }
    // Where the line from a box's centre along (ux, uy) leaves the box.
    function rim(g, ux, uy) {
      var t = Math.min(ux ? (BW / 2 + 2) / Math.abs(ux) : Infinity, uy ? (BH / 2 + 2) / Math.abs(uy) : Infinity);
      return [px[g] + ux * t, py[g] + uy * t];
    }
    var p = tier.pairs[c];
    for (var k = 0; k < p.length; k += P) {
      var a = p[k], b = p[k + 1], count = p[k + 2], over = p[k + 3] === 1;
      var dx = px[b] - px[a], dy = py[b] - py[a], len = Math.sqrt(dx * dx + dy * dy);
      var ux = dx / len, uy = dy / len;
      var s = rim(a, ux, uy), e = rim(b, -ux, -uy);
      var bend = 0.2, sx = e[0] - s[0], sy = e[1] - s[1];
      var qx = (s[0] + e[0]) / 2 - sy * bend, qy = (s[1] + e[1]) / 2 + sx * bend;
      frag.appendChild(title(el("path", { d: "M" + s[0] + "," + s[1] + " Q" + qx + "," + qy + " " + e[0] + "," + e[1],
        "class": "gedge" + (over ? " over" : ""), "marker-end": "url(#garrow" + (over ? "-over" : "") + ")" }),
        (tier.names[a] || "no location") + " -> " + (tier.names[b] || "no location") + ": " + count +
        (count === 1 ? " inter-node edge" : " inter-node edges")));
      // The label at the curve's middle.
      frag.appendChild(el("text", { "class": over ? "over" : "", x: 0.25 * s[0] + 0.5 * qx + 0.25 * e[0] + 3,
        y: 0.25 * s[1] + 0.5 * qy + 0.25 * e[1] - 3 }, String(count)));
    }
    gsvg.setAttribute("viewBox", "0 0 " + Math.round(W) + " " + Math.round(H));
    gsvg.setAttribute("width", String(Math.round(W)));
    gsvg.setAttribute("height", String(Math.round(H)));
    gsvg.replaceChildren(frag);
    var x = tier.crossings[c], fewest = tier.minimum[c];
    gnote.textContent = "level " + tier.level + ", channel " + c + ": " + x + " crossings between " + n +
      " groups, the fewest " + fewest + (x > fewest ? " (+" + (x - fewest) + ")" : "");
  }
  if (levelSel) levelSel.addEventListener("change", function () { drawGroups(+select.value); });

  function draw(c, selRank) {
    drawGroups(c);
    var t = performance.now();
    var frag = document.createDocumentFragment();
    var defs = el("defs", {});
    classes.forEach(function (cl) {
      var mk = el("marker", { id: "arrow-" + cl, viewBox: "0 0 10 10", refX: "10", refY: "5",
        markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" });
      mk.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: colours[cl] }));
      defs.appendChild(mk);
    });
    frag.appendChild(defs);
    data.groups.forEach(function (g) {
      frag.appendChild(title(el("rect", { "class": "box", x: g.x, y: g.y, width: g.w, height: g.h }), g.name || "no location"));
      frag.appendChild(el("text", { x: g.x + 4, y: g.y + 11 }, g.name || "no location"));
    });
    var e = data.edges[c], few = e.length / E <= 300;
    for (var k = 0; k < e.length; k += E) {
      var a = e[k], b = e[k + 1];
      var x1 = data.x[a], y1 = data.y[a], x2 = data.x[b], y2 = data.y[b];
      // A curve bent to the right of its direction, so that a -> b and
      // b -> a stay apart.
      var dx = x2 - x1, dy = y2 - y1, bend = 0.15;
      var qx = (x1 + x2) / 2 - dy * bend, qy = (y1 + y2) / 2 + dx * bend;
      var cl = edgeClass(e, k);
      var p = el("path", { d: "M" + x1 + "," + y1 + " Q" + qx + "," + qy + " " + x2 + "," + y2,
        "class": "edge " + cl, "marker-end": "url(#arrow-" + cl + ")" });
      title(p, "rank " + e[k + 2] + " (" + hostOf(a) + ", NIC index " + nic(e[k + 4]) + ") -> rank " +
        e[k + 3] + " (" + hostOf(b) + ", NIC index " + nic(e[k + 5]) + ")" +
        (e[k + 6] > 0 ? ", crossing level " + e[k + 6] : ""));
      frag.appendChild(p);
      if (few) {
        [[0.2, e[k + 4]], [0.8, e[k + 5]]].forEach(function (at) {
          var s = at[0], u = 1 - s;
          frag.appendChild(el("text", { x: u * u * x1 + 2 * u * s * qx + s * s * x2 + 2,
            y: u * u * y1 + 2 * u * s * qy + s * s * y2 - 2 }, nic(at[1])));
        });
      }
    }
    var markedNode = {}, selNode = selRank >= 0 ? data.node[selRank] : -1;
    for (var r in marks) if (markedOn(+r, c) && +r < data.nRanks) markedNode[data.node[+r]] = true;
    for (var m = 0; m < data.x.length; m++) {
      var cls = "node" + (markedNode[m] ? " marked" : "") + (m === selNode ? " sel" : "");
      frag.appendChild(title(el("rect", { "class": cls, x: data.x[m] - 5, y: data.y[m] - 5, width: 10, height: 10 }),
        "node " + m + ": " + hostOf(m) + (data.loc[m] ? " at " + data.loc[m] : ", no location")));
      if (data.nodeLabels) {
        frag.appendChild(el("text", { "class": "nlabel", x: data.x[m], y: data.y[m],
          "text-anchor": "middle", "dominant-baseline": "central" }, String(m)));
      }
    }
    svg.replaceChildren(frag);
    var n = Object.keys(markedNode).length;
    note.textContent = e.length / E + " inter-node edges" + (few ? "" : " (NIC indices on hover)") +
      (n ? "; " + n + (n === 1 ? " node" : " nodes") + " with a finding on this channel" : "") +
      "; drawn in " + Math.round(performance.now() - t) + " ms";
  }

  function fill(details) {
    var pre = details.querySelector("pre");
    if (pre.firstChild) return;
    var c = +details.dataset.channel, ring = data.rings[c], run = [];
    for (var i = 0; i < ring.length; i++) {
      if (markedOn(ring[i], c)) {
        pre.appendChild(document.createTextNode(run.join(" ") + (run.length ? " " : "")));
        run = [];
        var mk = document.createElement("mark");
        mk.textContent = String(ring[i]);
        mk.id = "c" + c + "-r" + ring[i];
        pre.appendChild(mk);
        pre.appendChild(document.createTextNode(" "));
      } else {
        run.push(ring[i]);
      }
    }
    pre.appendChild(document.createTextNode(run.join(" ")));
  }
  document.querySelectorAll("#rank-lists details").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) fill(d); });
  });

  select.addEventListener("change", function () { draw(+select.value, -1); });
  document.querySelectorAll("tr.finding").forEach(function (row) {
    row.addEventListener("click", function () {
      document.querySelectorAll("tr.finding.sel").forEach(function (s) { s.classList.remove("sel"); });
      row.classList.add("sel");
      var r = +row.dataset.rank, c = +row.dataset.channel;
      if (c < 0) c = +select.value;
      select.value = String(c);
      draw(c, r);
      svg.scrollIntoView({ block: "nearest" });
    });
  });

  // "#channel=N" in the address opens on channel N, its userRanks shown:
  // a link into a page attached to a ticket.
  var first = 0, asked = /^#channel=(\d+)$/.exec(location.hash);
  if (asked && +asked[1] < data.rings.length) {
    first = +asked[1];
    select.value = String(first);
    var d = document.querySelector('#rank-lists details[data-channel="' + first + '"]');
    fill(d);
    d.open = true;
  }
  draw(first, -1);
  var status = document.getElementById("status");
  // performance.now() counts from the start of navigation: the page's
  // whole load, its parsing included, to the first picture.
  var loaded = Math.round(performance.now());
  status.textContent = "rendered in " + Math.round(performance.now() - t0) + " ms, " + loaded + " ms after the page began to load";
  status.dataset.ms = String(loaded);
})();
