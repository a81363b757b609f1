-- scenes/rope_bridge.lua: a rope bridge of closed loops (after S1 Fig. 3). Two ropes of capsule links hang
-- between four posts, and the planks are links of both ropes: each plank is joined by ball joints to the
-- rope links before and after it on both sides, so a plank, the two links beside it and the next plank
-- form a closed loop of four bodies. Two hand ropes above hang from the posts too, and a vertical
-- suspender joins every plank's end to them: loops between the ropes and the bridge itself. 14 planks,
-- 106 bodies and 148 ball joints (S1's bridge had 102 bodies; S1 needs no special treatment for loops).
-- The bridge is built already sagging on a circular arc whose chords are exactly a link or a plank long
-- (the hand ropes on the same arc, higher up), so every joint starts closed. Boxes fall on it. The bridge's
-- parts collide with the boxes and the ground only (collision groups), not with each other.
-- Keys: B drops a box, M drops five at once.
local N, PITCH, PLANK, WIDTH, SPAN_FRACTION = 14, 0.2, 0.26, 1.5, 0.9
local HEIGHT, RAIL = 3, 0.8 -- the deck's anchors' height; the hand ropes' height above the deck
-- the scene's state in `state`, which the runner keeps across hot reloads (which re-run this file)
local S = state
S.joints, S.boxes, S.drops = S.joints or {}, S.boxes or {}, S.drops or 0

-- the points of a sagging arc through two anchors D = SPAN_FRACTION x (the chain's length) apart at height
-- HEIGHT, whose chords are, in turn, a rope link (PITCH) and a plank (PLANK): N planks, N + 1 links.
-- A chord c subtends 2 asin(c / 2R) on a circle of radius R, so R solves
--   f(R) = sum_i 2 asin(c_i / 2R) - 2 asin(D / 2R) = 0,
-- with f < 0 at R = D/2 (for a sag this shallow) and f > 0 as R grows: bisection on R.
local function arc_points()
  local chords = {}
  for k = 1, 2 * N + 1 do chords[k] = k % 2 == 1 and PITCH or PLANK end
  local total = 0
  for _, c in ipairs(chords) do total = total + c end
  local D = SPAN_FRACTION * total
  local function f(R)
    local a = -2 * math.asin(D / (2 * R))
    for _, c in ipairs(chords) do a = a + 2 * math.asin(c / (2 * R)) end
    return a
  end
  local lo, hi = D / 2, 1e3
  for _ = 1, 200 do
    local mid = 0.5 * (lo + hi)
    if f(mid) < 0 then lo = mid else hi = mid end
  end
  local R = 0.5 * (lo + hi)
  local phi = math.asin(D / (2 * R))
  local cy = HEIGHT + R * math.cos(phi) -- the arc's centre is above the anchors
  local pts, a = { { -R * math.sin(phi), HEIGHT } }, -phi
  for k, c in ipairs(chords) do
    a = a + 2 * math.asin(c / (2 * R)) -- angle from straight down
    pts[k + 1] = { R * math.sin(a), cy - R * math.cos(a) }
  end
  return pts
end

local function drop_box(world)
  S.drops = S.drops + 1
  local s = 0.25 + 0.1 * (S.drops % 3)
  local x = ((S.drops * 0.37) % 1 - 0.5) * 3.5
  S.boxes[#S.boxes + 1] = world:box { size = { s, s, s }, position = { x, HEIGHT + 1.2 + 0.4 * (S.drops % 4), 0.12 * ((S.drops % 5) - 2) },
    axis = { 0.3, 1, 0.2 }, angle = S.drops, density = 400, friction = 0.9,
    color = { 0.85, 0.45 + 0.1 * (S.drops % 4), 0.25 } }
end

return {
  title = "Rope bridge of closed loops (S1 Fig. 3)",
  keys = { { "b", "drop a box" }, { "m", "drop five boxes" } },
  camera = { eye = { 2.8, 4.2, 5.2 }, target = { 0, 2.2, 0 } },
  setup = function(world)
    S.joints, S.boxes, S.drops = {}, {}, 0
    world:plane { friction = 0.6, restitution = 0 }
    local pts = arc_points()
    local first, last = pts[1], pts[#pts]
    -- posts under the four anchors
    for _, p in ipairs { first, last } do
      for _, z in ipairs { -WIDTH / 2, WIDTH / 2 } do
        local px = p[1] + (p[1] < 0 and -0.12 or 0.12)
        world:box { static = true, size = { 0.16, HEIGHT + RAIL + 0.1, 0.16 }, position = { px, (HEIGHT + RAIL + 0.1) / 2, z },
          friction = 0.6 }
      end
    end
    -- plank k lies on chord 2k (points 2k .. 2k + 1), a little below it; rope links on the odd chords
    local planks = {}
    for k = 1, N do
      local a, b = pts[2 * k], pts[2 * k + 1]
      local ang = math.atan(b[2] - a[2], b[1] - a[1])
      planks[k] = world:box { size = { PLANK + 0.06, 0.1, WIDTH - 0.1 },
        position = { (a[1] + b[1]) / 2 + 0.05 * math.sin(ang), (a[2] + b[2]) / 2 - 0.05 * math.cos(ang), 0 },
        axis = { 0, 0, 1 }, angle = ang, density = 500, friction = 0.7, color = { 0.55, 0.38, 0.22 }, group = 4, mask = 1 }
    end
    -- rope link k joins plank k - 1's end to plank k's start (the world at the two ends), on both sides
    for _, z in ipairs { -WIDTH / 2, WIDTH / 2 } do
      for k = 1, N + 1 do
        local a, b = pts[2 * k - 1], pts[2 * k]
        local link = world:capsule { radius = 0.03, length = PITCH - 0.08, position = { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2, z },
          axis = { 0, 0, 1 }, angle = math.atan(b[2] - a[2], b[1] - a[1]) - math.pi / 2, density = 600,
          color = { 0.8, 0.75, 0.55 }, group = 2, mask = 1 }
        S.joints[#S.joints + 1] = world:joint { type = "point", a = link, b = planks[k - 1], anchor = { a[1], a[2], z } }
        S.joints[#S.joints + 1] = world:joint { type = "point", a = link, b = planks[k], anchor = { b[1], b[2], z } }
      end
    end
    -- hand ropes RAIL above the deck ropes, from one plank's end to the next (the world at both ends), and a
    -- vertical suspender from every plank's end up to them: loops between the ropes and the bridge itself
    -- (S1 Fig. 3). Node k is plank k's end (point 2k + 1); nodes 0 and N + 1 are the anchors.
    local function node(k) return k == 0 and pts[1] or k == N + 1 and pts[#pts] or pts[2 * k + 1] end
    for _, z in ipairs { -WIDTH / 2, WIDTH / 2 } do
      local prev
      for k = 1, N + 1 do
        local a, b = node(k - 1), node(k)
        local len = math.sqrt((b[1] - a[1]) ^ 2 + (b[2] - a[2]) ^ 2)
        local link = world:capsule { radius = 0.025, length = len - 0.07, position = { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2 + RAIL, z },
          axis = { 0, 0, 1 }, angle = math.atan(b[2] - a[2], b[1] - a[1]) - math.pi / 2, density = 600,
          color = { 0.8, 0.75, 0.55 }, group = 2, mask = 1 }
        S.joints[#S.joints + 1] = world:joint { type = "point", a = link, b = prev, anchor = { a[1], a[2] + RAIL, z } }
        if k == N + 1 then
          S.joints[#S.joints + 1] = world:joint { type = "point", a = link, anchor = { b[1], b[2] + RAIL, z } }
        else
          local hanger = world:capsule { radius = 0.02, length = RAIL - 0.16, position = { b[1], b[2] + RAIL / 2, z },
            density = 600, color = { 0.75, 0.7, 0.5 }, group = 2, mask = 1 }
          S.joints[#S.joints + 1] = world:joint { type = "point", a = hanger, b = planks[k], anchor = { b[1], b[2], z } }
          S.joints[#S.joints + 1] = world:joint { type = "point", a = hanger, b = link, anchor = { b[1], b[2] + RAIL, z } }
        end
        prev = link
      end
    end
    for _ = 1, 4 do drop_box(world) end
  end,
  keypressed = function(world, key)
    if key == "b" then drop_box(world)
    elseif key == "m" then for _ = 1, 5 do drop_box(world) end end
  end,
  draw = function(world, gfx)
    local gap = 0
    for _, j in ipairs(S.joints) do gap = math.max(gap, j.gap) end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("%d planks, %d joints, %d boxes   largest joint gap %.1e m   B: drop a box   M: five",
      N, #S.joints, #S.boxes, gap), { 0.9, 0.9, 0.9, 1 })
  end,
}
