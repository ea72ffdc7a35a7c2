"use strict";
// The report page's views (issue 37), drawn with D3 from the JSON blob
// (report.Data): the ring view, the group view, and the links between
// them and the node table; and each channel's userRanks when opened.
// Strings from the dumps are only ever set as text (D3's .text and
// .attr, textContent), never parsed as markup. Without D3 (a build
// without the set-up step) only the userRanks and the table links work.
//
// Every JSON blob <script type="application/json" id="PREFIXdata"> is one
// job, drawn into the elements whose ids are PREFIX and the names below
// (ring, groups, channel, level, find, fit, find-note, channel-note,
// group-note, node-table, node-M, rank-lists, findings, status; the last
// three but status may be absent): the report's page has one, PREFIX "",
// and the page comparing two jobs two, "a-" and "b-" (page.html's
// "views" template writes both kinds).
(function () {
  var t0 = performance.now();
  document.querySelectorAll('script[type="application/json"][id$="data"]').forEach(function (blob) {
    view(blob.id.slice(0, -"data".length), JSON.parse(blob.textContent));
  });

function view(prefix, data) {
  function $(name) { return document.getElementById(prefix + name); }
  var select = $("channel");
  var E = 7; // ints per edge (report.EdgeInts)
  var P = 4; // ints per pair (report.PairInts)
  var nNodes = data.host.length;

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
  var ranksOf = [];
  for (var m0 = 0; m0 < nNodes; m0++) ranksOf.push([]);
  data.node.forEach(function (m, r) { ranksOf[m].push(r); });

  // A channel's userRanks, filled when its details element is opened.
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
  var rankLists = $("rank-lists");
  if (rankLists) rankLists.querySelectorAll("details").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) fill(d); });
  });

  var status = $("status");
  var d3 = window.d3;
  if (!d3) {
    // The page says so in #nod3 (from Go); the table rows still pick.
    status.textContent = "built without D3";
    return;
  }

  // Text widths, measured in the fonts the stylesheet gives the SVG text
  // (canvas measureText: no element per label in the layout).
  var ctx = document.createElement("canvas").getContext("2d");
  var widths = {};
  function textWidth(s, px) {
    var key = px + "|" + s;
    if (widths[key] === undefined) {
      ctx.font = px + "px sans-serif";
      widths[key] = ctx.measureText(s).width;
    }
    return widths[key];
  }
  var LABEL_H = 13; // a label's height, 11 px text with its descent

  function hostOf(m) { return data.host[m] || "?"; }
  function groupName(name) { return name || "no location"; }
  // A group's short name: its last location name ("spine0/leaf3": "leaf3").
  function shortName(name) { return name ? name.slice(name.lastIndexOf("/") + 1) : "no location"; }
  function nodeTitle(m) {
    var rs = ranksOf[m];
    return "node " + m + ": " + hostOf(m) + (data.loc[m] ? " at " + data.loc[m] : ", no location") +
      "; ranks " + (rs.length ? rs[0] + (rs.length > 1 ? "-" + rs[rs.length - 1] : "") : "none");
  }
  function edgeClass(e, k) {
    if (!data.loc[e[k]] || !data.loc[e[k + 1]]) return "xu";
    return "x" + Math.min(e[k + 6], 5);
  }

  // The location tree: the root, a child per group of level 1, theirs
  // per group of level 2, ..., the nodes as leaves in data.order.
  var depth = data.levels.length;
  function tree() {
    var root = { children: [], key: "" };
    data.order.forEach(function (m) {
      var at = root;
      for (var l = 0; l < depth; l++) {
        var g = data.levels[l].group[m];
        var last = at.children[at.children.length - 1];
        if (!last || last.group !== g) {
          last = { children: [], group: g, level: l + 1, name: data.levels[l].names[g] };
          at.children.push(last);
        }
        at = last;
      }
      at.children.push({ node: m });
    });
    return d3.hierarchy(root);
  }
  var root = tree();
  var leafOf = [];
  root.leaves().forEach(function (leaf) { leafOf[leaf.data.node] = leaf; });

  // ---- The ring view ----
  var svg = d3.select($("ring"));
  var W = Math.max(480, Math.floor(svg.node().parentNode.clientWidth || 900));
  var H = Math.min(W, 860);
  svg.attr("width", W).attr("height", H).attr("viewBox", [-W / 2, -H / 2, W, H].join(" "));
  var BAND = 18, GAP = 2; // a level's arcs, and between levels
  var R = Math.min(W, H) / 2 - 6; // the outermost arc's outer edge
  var bandIn = function (l) { return R - l * (BAND + GAP) + GAP; }; // level l (1..depth)
  var bandOut = function (l) { return R - (l - 1) * (BAND + GAP); };
  // Room between the nodes and the innermost arcs for a radial label:
  // the widest node index, 10 px text.
  var NODE_LABEL = textWidth(String(Math.max(0, nNodes - 1)), 10) + 10;
  var r0 = bandIn(depth) - NODE_LABEL - 6; // the nodes' circle
  var cluster = d3.cluster().size([2 * Math.PI, r0])
    .separation(function (a, b) { return a.parent === b.parent ? 1 : 2; });
  cluster(root);
  var step = 2 * Math.PI; // the smallest angle between two nodes
  var leaves = root.leaves();
  for (var li = 0; li < leaves.length; li++) {
    var nx = leaves[(li + 1) % leaves.length].x + (li + 1 === leaves.length ? 2 * Math.PI : 0);
    if (leaves.length > 1) step = Math.min(step, nx - leaves[li].x);
  }
  var DOT = Math.max(1.5, Math.min(5, r0 * step * 0.35));
  // A dot's radius on the screen at zoom k: it grows at most to twice.
  function dotShown(k) { return Math.min(5, DOT * Math.min(k, 2)); }

  var view = svg.append("g").attr("class", "view");
  var edgeLayer = view.append("g").attr("class", "edges");
  var arcLayer = view.append("g").attr("class", "arcs");
  var nodeLayer = view.append("g").attr("class", "nodes");
  var labelLayer = svg.append("g").attr("class", "labels"); // screen space: not zoomed

  // A group's arc: from half a step before its first node to half a step
  // after its last, in its level's band.
  var groups = root.descendants().filter(function (d) { return d.depth > 0 && d.children; });
  groups.forEach(function (d) {
    var ls = d.leaves();
    d.a0 = ls[0].x - step * 0.45;
    d.a1 = ls[ls.length - 1].x + step * 0.45;
  });
  var arc = d3.arc().innerRadius(function (d) { return bandIn(d.depth); })
    .outerRadius(function (d) { return bandOut(d.depth); })
    .startAngle(function (d) { return d.a0; }).endAngle(function (d) { return d.a1; });
  arcLayer.selectAll("path").data(groups).join("path")
    .attr("class", "arc").attr("d", arc)
    .attr("data-level", function (d) { return d.depth; })
    .attr("data-group", function (d) { return d.data.group; })
    .on("click", function (ev, d) { zoomTo(d); })
    .append("title").text(function (d) {
      var n = d.leaves().length;
      return "level " + d.depth + ": " + groupName(d.data.name) + ", " + n + (n === 1 ? " node" : " nodes") + " (select to zoom)";
    });

  var dots = nodeLayer.selectAll("circle").data(leaves).join("circle")
    .attr("class", "node")
    .attr("data-node", function (d) { return d.data.node; })
    .attr("r", DOT)
    .attr("transform", function (d) { var p = d3.pointRadial(d.x, d.y); return "translate(" + p[0] + "," + p[1] + ")"; })
    .on("click", function (ev, d) { pick(d.data.node, false); });
  dots.append("title").text(function (d) { return nodeTitle(d.data.node); });

  var line = d3.lineRadial().curve(d3.curveBundle.beta(0.85))
    .radius(function (d) { return d.y; }).angle(function (d) { return d.x; });

  var channel = 0, picked = -1, transform = d3.zoomIdentity;

  function drawEdges(c) {
    var e = data.edges[c], list = [];
    for (var k = 0; k < e.length; k += E) list.push(k);
    edgeLayer.selectAll("path").data(list).join("path")
      .attr("class", function (k) {
        return "edge " + edgeClass(e, k) + (picked >= 0 && (e[k] === picked || e[k + 1] === picked) ? " on" : "");
      })
      .attr("d", function (k) { return line(leafOf[e[k]].path(leafOf[e[k + 1]])); })
      .selectAll("title").data(function (k) { return [k]; }).join("title")
      .text(function (k) {
        return "rank " + e[k + 2] + " (node " + e[k] + ", " + hostOf(e[k]) + ", NIC index " + nic(e[k + 4]) + ") -> rank " +
          e[k + 3] + " (node " + e[k + 1] + ", " + hostOf(e[k + 1]) + ", NIC index " + nic(e[k + 5]) + ")" +
          (e[k + 6] > 0 ? ", crossing level " + e[k + 6] : "");
      });
    var markedNode = {};
    for (var rk in marks) if (+rk < data.nRanks && markedOn(+rk, c)) markedNode[data.node[+rk]] = true;
    dots.classed("marked", function (d) { return !!markedNode[d.data.node]; });
    var n = Object.keys(markedNode).length;
    return e.length / E + " inter-node edges on channel " + c +
      (n ? "; " + n + (n === 1 ? " node" : " nodes") + " with a finding on this channel" : "");
  }
  function nic(d) { return d < 0 ? "?" : String(d); }

  // The labels, in screen space so that they keep their size whatever
  // the zoom, and culled: a label is drawn only where it fits whole
  // inside the picture and over no other label.
  //
  // A node's label runs outward from its dot along its radius. Two such
  // labels cannot meet when their angles differ by at least the angle
  // that the label's height spans at the radius where they start, so
  // going round the circle a label is kept when it is that far from the
  // last one kept (and from the first, across the wrap).
  //
  // A group's label is written along its arc, in its band, at the middle
  // of the arc's visible part; kept when its rectangle fits between the
  // band's edges and inside the arc's angles: arcs never overlap, so
  // neither do their labels, nor a node's, which stay inside the bands.
  function inside(x, y) { return x >= -W / 2 + 1 && x <= W / 2 - 1 && y >= -H / 2 + 1 && y <= H / 2 - 1; }
  function corners(cx, cy, angle, w, h, anchorStart) {
    // A w x h rectangle along direction angle (radians, screen), centred
    // across it on (cx, cy), starting there when anchorStart, else centred.
    var ux = Math.cos(angle), uy = Math.sin(angle), vx = -uy, vy = ux;
    var s0 = anchorStart ? 0 : -w / 2, s1 = anchorStart ? w : w / 2;
    return [[cx + ux * s0 + vx * h / 2, cy + uy * s0 + vy * h / 2], [cx + ux * s1 + vx * h / 2, cy + uy * s1 + vy * h / 2],
      [cx + ux * s1 - vx * h / 2, cy + uy * s1 - vy * h / 2], [cx + ux * s0 - vx * h / 2, cy + uy * s0 - vy * h / 2]];
  }
  function allInside(cs) { return cs.every(function (p) { return inside(p[0], p[1]); }); }

  function drawLabels() {
    var t = transform, k = t.k;
    var centre = t.apply([0, 0]);
    var nodeLabels = [];
    // Node labels: radial, 10 px; angle a is d3's (0 up, clockwise).
    var start = k * r0 + dotShown(k) + 3; // screen distance from the centre
    var need = 2 * Math.asin(Math.min(1, (LABEL_H / 2 + 1) / start));
    var firstKept = null, lastKept = null;
    // Zoomed in far enough, a label says the node's host too.
    var room = k * bandIn(depth) - start - 6;
    leaves.forEach(function (d) {
      var m = d.data.node, text = String(m), w = textWidth(text, 10);
      var long = m + " " + hostOf(m), lw = textWidth(long, 10);
      if (k > 1 && lw <= room) { text = long; w = lw; }
      var dir = d.x - Math.PI / 2; // screen angle of the radius
      var cx = centre[0] + Math.cos(dir) * start, cy = centre[1] + Math.sin(dir) * start;
      var cs = corners(cx, cy, dir, w, LABEL_H, true);
      if (!allInside(cs)) return;
      if (lastKept !== null && d.x - lastKept < need) return;
      if (firstKept !== null && firstKept + 2 * Math.PI - d.x < need) return;
      if (firstKept === null) firstKept = d.x;
      lastKept = d.x;
      nodeLabels.push({ m: m, text: text, x: cx, y: cy, dir: dir, w: w });
    });
    labelLayer.selectAll("text.nl").data(nodeLabels, function (d) { return d.m; }).join("text")
      .attr("class", "nl").attr("data-node", function (d) { return d.m; })
      .attr("dominant-baseline", "central")
      .attr("text-anchor", function (d) { return flipped(d.dir) ? "end" : "start"; })
      .attr("transform", function (d) {
        var deg = d.dir * 180 / Math.PI;
        // Left half: turned half round and anchored at its end, so that it
        // reads left to right from the same start.
        return "translate(" + d.x + "," + d.y + ") rotate(" + (flipped(d.dir) ? deg + 180 : deg) + ")";
      })
      .text(function (d) { return d.text; });

    // Group labels, 11 px, along their arcs.
    var groupLabels = [];
    groups.forEach(function (d) {
      var rin = k * bandIn(d.depth), rout = k * bandOut(d.depth), rm = (rin + rout) / 2;
      var a0 = d.a0, a1 = d.a1;
      // The arc's visible part: sample it, keep the angles whose middle
      // of the band is in the picture.
      var n = 24, seen = [];
      for (var i = 0; i <= n; i++) {
        var a = a0 + (a1 - a0) * i / n;
        if (inside(centre[0] + Math.sin(a) * rm, centre[1] - Math.cos(a) * rm)) seen.push(a);
      }
      if (!seen.length) return;
      var lo = seen[0], hi = seen[seen.length - 1], mid = (lo + hi) / 2;
      var text = shortName(d.data.name), w = textWidth(text, 11);
      var half = (hi - lo) / 2 - Math.min(step, 0.02); // keep clear of the arc's ends
      // The rectangle tangent at rm: its ends reach sqrt((rm+h/2)^2 +
      // (w/2)^2) outward and the angle atan((w/2)/(rm-h/2)) aside.
      if (rm - LABEL_H / 2 < rin + 1) return;
      if (Math.sqrt(Math.pow(rm + LABEL_H / 2, 2) + w * w / 4) > rout - 1) return;
      if (Math.atan2(w / 2, rm - LABEL_H / 2) > half) return;
      var cx = centre[0] + Math.sin(mid) * rm, cy = centre[1] - Math.cos(mid) * rm;
      var dir = mid; // the tangent's screen angle: perpendicular to the radius
      if (!allInside(corners(cx, cy, dir, w, LABEL_H, false))) return;
      groupLabels.push({ d: d, text: text, x: cx, y: cy, dir: dir });
    });
    labelLayer.selectAll("text.gl").data(groupLabels, function (g) { return g.d.depth + ":" + g.d.data.group; }).join("text")
      .attr("class", "gl").attr("data-level", function (g) { return g.d.depth; })
      .attr("data-group", function (g) { return g.d.data.group; })
      .attr("text-anchor", "middle").attr("dominant-baseline", "central")
      .attr("transform", function (g) {
        var deg = g.dir * 180 / Math.PI;
        // The lower half of the circle: turned half round to read upright.
        if (Math.cos(g.dir) < 0) deg += 180;
        return "translate(" + g.x + "," + g.y + ") rotate(" + deg + ")";
      })
      .text(function (g) { return g.text; })
      .selectAll("title").data(function (g) { return [g]; }).join("title")
      .text(function (g) { return groupName(g.d.data.name); });
  }
  function flipped(dir) { return Math.cos(dir) < -1e-9; }

  var zoom = d3.zoom().scaleExtent([1, 200])
    .on("zoom", function (ev) {
      transform = ev.transform;
      view.attr("transform", transform);
      dots.attr("r", dotShown(transform.k) / transform.k);
      drawLabels();
    });
  svg.call(zoom).on("dblclick.zoom", null);

  // Zoom so that group d's arc, its nodes and their labels fill the picture.
  function zoomTo(d) {
    var pts = [], rs = [r0 - DOT - 2, bandOut(d.depth)];
    for (var i = 0; i <= 32; i++) {
      var a = d.a0 + (d.a1 - d.a0) * i / 32;
      rs.forEach(function (rr) { pts.push(d3.pointRadial(a, rr)); });
    }
    var xs = pts.map(function (p) { return p[0]; }), ys = pts.map(function (p) { return p[1]; });
    var x0 = d3.min(xs), x1 = d3.max(xs), y0 = d3.min(ys), y1 = d3.max(ys);
    var k = Math.max(1, Math.min(200, 0.85 * Math.min(W / Math.max(1, x1 - x0), H / Math.max(1, y1 - y0))));
    // No closer than it takes to label every node, 1.5 labels' height
    // between neighbours, with its host (or three times the whole job).
    var widest = d3.max(d.leaves(), function (l) { return textWidth(l.data.node + " " + hostOf(l.data.node), 10); });
    k = Math.min(k, Math.max(3, 1.5 * LABEL_H / (r0 * step), (widest + 20) / (bandIn(depth) - r0)));
    svg.call(zoom.transform, d3.zoomIdentity.scale(k).translate(-(x0 + x1) / 2, -(y0 + y1) / 2));
  }
  $("fit").addEventListener("click", function () {
    svg.call(zoom.transform, d3.zoomIdentity);
  });

  // Picking a node: its dot, its edges and its table row; from the
  // search box it is also zoomed to, with its innermost group.
  var findNote = $("find-note"), nodeTable = $("node-table");
  function pick(m, zoomToIt) {
    picked = m;
    svg.classed("picked", m >= 0);
    dots.classed("sel", function (d) { return d.data.node === m; });
    note.textContent = drawEdges(channel);
    nodeTable.querySelectorAll("tr.sel").forEach(function (tr) { tr.classList.remove("sel"); });
    if (m < 0) return;
    var row = $("node-" + m);
    if (row) {
      row.classList.add("sel");
      var box = row.closest(".scroll");
      if (box) box.scrollTop = row.offsetTop - box.clientHeight / 2;
    }
    if (zoomToIt && leafOf[m].parent && leafOf[m].parent.depth > 0) zoomTo(leafOf[m].parent);
  }
  nodeTable.querySelectorAll("tbody tr").forEach(function (tr) {
    tr.addEventListener("click", function () { pick(+tr.dataset.node, true); });
  });

  // The search box: "7" or "node 7" is node 7, "rank 12" or "r12" rank
  // 12's node, anything else a host (whole name first, then the one host
  // it is part of).
  function find(q) {
    q = q.trim();
    var n;
    if ((n = /^(?:n|node)?\s*(\d+)$/i.exec(q)) && +n[1] < nNodes) return { m: +n[1], how: "node " + n[1] };
    if ((n = /^(?:r|rank)\s*(\d+)$/i.exec(q)) && +n[1] < data.nRanks) return { m: data.node[+n[1]], how: "rank " + n[1] };
    if (!q) return null;
    var lower = q.toLowerCase(), part = [];
    for (var m = 0; m < nNodes; m++) {
      var h = hostOf(m).toLowerCase();
      if (h === lower) return { m: m, how: "host " + hostOf(m) };
      if (h.indexOf(lower) >= 0) part.push(m);
    }
    if (part.length === 1) return { m: part[0], how: "host " + hostOf(part[0]) };
    if (part.length > 1) return { many: part.length };
    return null;
  }
  $("find").addEventListener("input", function (ev) {
    var q = ev.target.value, f = find(q);
    if (!q.trim()) { findNote.textContent = ""; pick(-1, false); return; }
    if (!f) { findNote.textContent = "no node, host or rank matches"; return; }
    if (f.many) { findNote.textContent = f.many + " hosts match: type more of the name"; return; }
    pick(f.m, true);
    findNote.textContent = "found " + f.how + ": " + nodeTitle(f.m);
  });

  // ---- The group view: one level's crossings as a matrix ----
  var levelSel = $("level");
  var gsvg = d3.select($("groups"));
  var gnote = $("group-note");
  function drawGroups(c) {
    if (!levelSel) return;
    var tier = data.tiers[+levelSel.value], n = tier.names.length, p = tier.pairs[c];
    var names = tier.names.map(shortName);
    var cell = Math.max(2, Math.min(48, 560 / n));
    var showNames = cell >= LABEL_H;
    var labelW = showNames ? d3.max(names, function (s) { return textWidth(s, 11); }) + 8 : 0;
    var left = labelW + 4, top = labelW + 4;
    var side = cell * n, w = left + side + 8, h = top + side + 8;
    gsvg.attr("width", w).attr("height", h).attr("viewBox", [0, 0, w, h].join(" "));
    var x = d3.scaleBand().domain(d3.range(n)).range([0, side]);
    var most = 0, cells = [];
    for (var k = 0; k < p.length; k += P) {
      cells.push({ a: p[k], b: p[k + 1], n: p[k + 2], over: p[k + 3] === 1 });
      most = Math.max(most, p[k + 2]);
    }
    var colour = d3.scaleSequential(d3.interpolateBlues).domain([0, most || 1]);
    var g = gsvg.selectAll("g.matrix").data([0]).join("g").attr("class", "matrix")
      .attr("transform", "translate(" + left + "," + top + ")");
    g.selectAll("rect.grid").data([0]).join("rect").attr("class", "grid")
      .attr("width", side).attr("height", side).attr("fill", "#f7f7f7").attr("stroke", "#ccc");
    g.selectAll("rect.cell").data(cells).join("rect")
      .attr("class", function (d) { return "cell" + (d.over ? " over" : ""); })
      .attr("x", function (d) { return x(d.b); }).attr("y", function (d) { return x(d.a); })
      .attr("width", x.bandwidth()).attr("height", x.bandwidth())
      .attr("fill", function (d) { return colour(Math.max(d.n, most * 0.25)); })
      .selectAll("title").data(function (d) { return [d]; }).join("title")
      .text(function (d) {
        return groupName(tier.names[d.a]) + " -> " + groupName(tier.names[d.b]) + ": " + d.n +
          (d.n === 1 ? " inter-node edge" : " inter-node edges") + (d.over ? "; the ring leaves " + groupName(tier.names[d.a]) + " more than once" : "");
      });
    // The counts in the cells, where a cell holds its number.
    g.selectAll("text.count").data(cells.filter(function (d) { return textWidth(String(d.n), 11) + 4 <= cell && cell >= LABEL_H; })).join("text")
      .attr("class", function (d) { return "count" + (d3.lab(colour(Math.max(d.n, most * 0.25))).l < 55 ? " dark" : ""); })
      .attr("x", function (d) { return x(d.b) + cell / 2; }).attr("y", function (d) { return x(d.a) + cell / 2; })
      .attr("text-anchor", "middle").attr("dominant-baseline", "central")
      .text(function (d) { return d.n; });
    // Row names left of the matrix, column names above it, turned.
    var rows = showNames ? d3.range(n) : [];
    gsvg.selectAll("text.row").data(rows).join("text").attr("class", "row")
      .attr("x", left - 4).attr("y", function (i) { return top + x(i) + cell / 2; })
      .attr("text-anchor", "end").attr("dominant-baseline", "central")
      .text(function (i) { return names[i]; })
      .selectAll("title").data(function (i) { return [i]; }).join("title").text(function (i) { return groupName(tier.names[i]); });
    gsvg.selectAll("text.col").data(rows).join("text").attr("class", "col")
      .attr("transform", function (i) { return "translate(" + (left + x(i) + cell / 2) + "," + (top - 4) + ") rotate(-90)"; })
      .attr("text-anchor", "start").attr("dominant-baseline", "central")
      .text(function (i) { return names[i]; })
      .selectAll("title").data(function (i) { return [i]; }).join("title").text(function (i) { return groupName(tier.names[i]); });
    var xc = tier.crossings[c], fewest = tier.minimum[c];
    gnote.textContent = "level " + tier.level + ", channel " + c + ": " + xc + " crossings between " + n +
      " groups, the fewest " + fewest + (xc > fewest ? " (+" + (xc - fewest) + ")" : "");
  }
  if (levelSel) levelSel.addEventListener("change", function () { drawGroups(channel); });

  var note = $("channel-note");
  function show(c) {
    channel = c;
    note.textContent = drawEdges(c);
    drawGroups(c);
  }
  select.addEventListener("change", function () { show(+select.value); });
  var findings = $("findings");
  if (findings) findings.querySelectorAll("tr.finding").forEach(function (row) {
    row.addEventListener("click", function () {
      findings.querySelectorAll("tr.finding.sel").forEach(function (s) { s.classList.remove("sel"); });
      row.classList.add("sel");
      var r = +row.dataset.rank, c = +row.dataset.channel;
      if (c < 0) c = +select.value;
      select.value = String(c);
      show(c);
      if (r >= 0 && r < data.nRanks) pick(data.node[r], true);
      svg.node().scrollIntoView({ block: "nearest" });
    });
  });

  // "#channel=N" in the address opens on channel N, its userRanks shown:
  // a link into a page attached to a ticket.
  var first = 0, asked = /^#channel=(\d+)$/.exec(location.hash);
  if (asked && +asked[1] < data.rings.length && rankLists) {
    first = +asked[1];
    select.value = String(first);
    var det = rankLists.querySelector('details[data-channel="' + first + '"]');
    fill(det);
    det.open = true;
  }
  show(first);
  drawLabels();
  // performance.now() counts from the start of navigation: the page's
  // whole load, its parsing included, to the first picture.
  var loaded = Math.round(performance.now());
  status.textContent = "rendered in " + Math.round(performance.now() - t0) + " ms, " + loaded + " ms after the page began to load";
  status.dataset.ms = String(loaded);
}
})();
