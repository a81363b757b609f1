-- tools/fidelity_figures.lua: the rigid-body fidelity figures of the README, measured against their closed forms.
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;spec/support/?.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 tools/fidelity_figures.lua
-- The specs (gyroscopic_spec.lua, qp_spec.lua, impulse_spec.lua, restitution_spec.lua) assert bounds on
-- the same scenes (spec/support/tops.lua, spec/support/fidelity.lua).
local tops = require "tops"
local fidelity = require "fidelity"

local function row(what, closed, measured) print(string.format("%-58s %-26s %s", what, closed, measured)) end

print(string.format("%-58s %-26s %s", "scene", "closed form", "measured"))
for _, mode in ipairs { "impulse", "qp" } do
  for _, hz in ipairs { 60, 240 } do
    local dt = 1 / hz
    local w, b, j, Om = tops.pinned_top(mode, 100)
    local L0, e0 = tops.vertical_momentum(b, { 0, 1, 0 }), b:kinetic_energy() + b.mass * 9.81 * b.position[2]
    local sag, dL, gap = 0, 0, 0
    local angle = tops.turned(b, math.floor(5 / dt + 0.5), function()
      w:step(dt)
      sag = math.max(sag, math.abs(b.position[2] - 1))
      dL = math.max(dL, math.abs(tops.vertical_momentum(b, { 0, 1, 0 }) - L0) / L0)
      gap = math.max(gap, j.gap)
    end)
    local e = b:kinetic_energy() + b.mass * 9.81 * b.position[2]
    row(string.format("pinned top, 100 rad/s, %s, dt 1/%d, 5 s", mode, hz), string.format("Omega %.4f rad/s", Om),
      string.format("%+.3f %%, axis %.2f mm off level, dL_y/L_y %.0e, dE/E %.0e, gap %.0e m", 100 * (angle / 5 / Om - 1),
        1000 * sag, dL, (e - e0) / e0, gap))
  end
  local w, b, W = tops.conical_pendulum(mode, 0.5)
  local y0 = b.position[2]
  local angle = tops.turned(b, 240, function() w:step(1 / 60) end)
  row(string.format("conical pendulum, %s, dt 1/60, 4 s", mode), string.format("W %.4f rad/s", W),
    string.format("%+.3f %%, centre height %+.2f mm", 100 * (angle / 4 / W - 1), 1000 * (b.position[2] - y0)))
  local wj, bj, T = tops.flipping_box(mode, true)
  local half = tops.flip_half_period(wj, bj, 1 / 60, 30)
  row(string.format("box on a ball joint at its centre, %s, flips", mode), string.format("half period %.4f s", T),
    half and string.format("%+.3f %%", 100 * (half / T - 1)) or "never flipped")
end

for _, case in ipairs { { "sphere", 3 }, { "sphere", 1 }, { "capsule", 3 } } do
  local w, b = fidelity.roller(case[1], case[2], 0.5)
  local e0, lowest = b:kinetic_energy(), math.huge
  for _ = 1, 600 do
    w:step(1 / 60)
    lowest = math.min(lowest, b.position[2])
  end
  row(string.format("%s rolling at %g m/s, qp, 10 s", case[1], case[2]), "speed and energy kept",
    string.format("speed %+.4f %%, energy %+.4f %%, sank %.1e m", 100 * (b.velocity[1] / case[2] - 1),
      100 * (b:kinetic_energy() / e0 - 1), 0.5 - lowest))
end
do
  local w, b = fidelity.roller("sphere", 4, 0.3, { 0, 0, 0 })
  for _ = 1, 180 do w:step(1 / 60) end
  row("skidding ball, qp, mu 0.3, 3 s", "v = 5/7 v0", string.format("%+.4f %%", 100 * (b.velocity[1] / (4 * 5 / 7) - 1)))
end

for _, t in ipairs { { 20, 1 }, { 30, 1 }, { 30, 0.2 }, { 20, 1, true } } do
  local off, sunk, spin = fidelity.tower(t[1], t[2], t[3], 60)
  row(string.format("tower of %d cubes of %g m%s, impulse, 60 s", t[1], t[2], t[3] and ", masses 1 : 10" or ""),
    "stands", string.format("off its column %.1e m, top sank %.1e m, spin %.0e rad/s", off, sunk, spin))
end

for _, case in ipairs { { 0.6, 0 }, { 0.05, 0.5 } } do
  local vt, vn, wr = fidelity.oblique_bounce(case[1], case[2])
  local want = case[1] == 0.6 and string.format("v_t = w R = %.4f", 5 / 7)
    or string.format("v_t %.4f, w R %.4f", 1 - 0.05 * 1.5 * 3, 2.5 * 0.05 * 1.5 * 3)
  row(string.format("ball hitting the floor at (1, -3) m/s, mu %g, e %g", case[1], case[2]), want,
    string.format("v_t %.4f, w R %.4f, v_n %.4f", vt, wr, vn))
end

do
  local bounce_error, side, spin, drift = fidelity.flat_landing()
  row("unit box landing flat from 0.2 m, e 0.5, mu 0.6", "bounce e v, no slide or spin",
    string.format("bounce %+.1e m/s, side %.0e m/s, spin %.0e rad/s, moved %.0e m", bounce_error, side, spin, drift))
end

local a, b = fidelity.two_balls("qp")
row("two e = 1 balls meeting at 0.3 m/s, qp", "swap: -0.15, 0.15", string.format("%.6f, %.6f", a.velocity[1], b.velocity[1]))
a, b = fidelity.two_balls("impulse", 0.2)
row("the same, impulse, restitution_threshold 0.2", "swap: -0.15, 0.15", string.format("%.6f, %.6f", a.velocity[1], b.velocity[1]))
for _, mode in ipairs { "qp", "impulse" } do
  for _, speed in ipairs { 1, 5 } do
    local ratio = fidelity.gas(mode, speed, mode == "impulse" and 0 or nil)
    row(string.format("elastic 50-ball gas, %s, speeds to %g m/s, 10 s", mode, speed), "energy kept",
      string.format("%+.1e", ratio - 1))
  end
end
