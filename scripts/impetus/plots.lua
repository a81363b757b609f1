-- plots: the viewer's live plots (F6) of the last 10 s of the world: kinetic, potential and total energy,
-- linear momentum and angular momentum about the origin (components), touching contacts, and the
-- step's stage times (the world's profile). Sampled after every step while shown; drawn with ui.plot
-- in a column on the right of the window.
local ui = require "impetus.ui"

local Plots = {}
Plots.__index = Plots

local WINDOW = 10 -- seconds shown

local RED, GREEN, BLUE = { 1, 0.45, 0.4 }, { 0.5, 0.9, 0.45 }, { 0.45, 0.65, 1 }
local YELLOW, WHITE, GREY = { 1, 0.85, 0.35 }, { 0.95, 0.95, 0.95 }, { 0.7, 0.7, 0.75 }

-- the panels: title, y label and the series (key in a sample, label, colour)
Plots.panels = {
  { title = "energy", y_label = "J", series = { { "kinetic", "kinetic", RED }, { "potential", "potential", BLUE },
    { "total", "total", WHITE } } },
  { title = "linear momentum", y_label = "kg m/s", series = { { "px", "x", RED }, { "py", "y", GREEN }, { "pz", "z", BLUE } } },
  { title = "angular momentum (origin)", y_label = "kg m^2/s", series = { { "lx", "x", RED }, { "ly", "y", GREEN },
    { "lz", "z", BLUE } } },
  { title = "contacts", y_label = "count", zero = true, series = { { "manifolds", "touching pairs", YELLOW },
    { "resting", "resting particles", BLUE } } },
  { title = "step stages", y_label = "ms", zero = true, series = { { "integrate", "particles", BLUE },
    { "collide", "particle collisions", GREEN }, { "bodies", "bodies", RED }, { "contacts", "collision detection", YELLOW },
    { "total", "total", GREY } } },
}

function Plots.new()
  return setmetatable({ samples = {} }, Plots)
end

-- the world after a step (tick: the runner's)
function Plots:sample(world, tick)
  local p = world:profile()
  local P, L = world:momentum()
  local ke, pe = world:kinetic_energy(), world:potential_energy()
  local s = self.samples
  s[#s + 1] = {
    tick = tick, t = world.time, kinetic = ke, potential = pe, total = ke + pe,
    px = P[1], py = P[2], pz = P[3], lx = L[1], ly = L[2], lz = L[3],
    manifolds = world.manifold_count, resting = world.contact_count,
    step = { integrate = p.integrate, collide = p.collide, bodies = p.bodies, contacts = p.contacts, total = p.total },
  }
  -- keep the window (and drop in chunks: one copy per window, not per sample)
  if #s > 2 and s[#s].t - s[1].t > 2 * WINDOW then
    local keep, first = {}, nil
    for i, x in ipairs(s) do
      if not first and s[#s].t - x.t <= WINDOW then first = i end
      if first then keep[#keep + 1] = x end
    end
    self.samples = keep
  end
end

-- the samples after tick go (the history went back there)
function Plots:truncate(tick)
  local s = self.samples
  while #s > 0 and s[#s].tick > tick do s[#s] = nil end
end

function Plots:clear() self.samples = {} end

-- the panels in the box (x, y, w, h), stacked
function Plots:draw(gfx, x, y, w, h)
  local s, shown = self.samples, {}
  local t_last = s[#s] and s[#s].t or 0
  for _, x_ in ipairs(s) do if t_last - x_.t <= WINDOW then shown[#shown + 1] = x_ end end
  local gap, n = 6, #Plots.panels
  local ph = (h - gap * (n - 1)) / n
  for k, panel in ipairs(Plots.panels) do
    local series = {}
    for _, def in ipairs(panel.series) do
      local values = {}
      for i, sample in ipairs(shown) do
        local v = sample[def[1]]
        if panel.title == "step stages" then v = sample.step[def[1]] end
        values[i] = v or 0
      end
      series[#series + 1] = { values = values, label = def[2], color = def[3] }
    end
    local xr = shown[1] and { shown[1].t, shown[#shown].t } or { 0, 0 }
    ui.plot(gfx, x, y + (k - 1) * (ph + gap), w, ph, series,
      { title = panel.title, y_label = panel.y_label, x_label = "t (s)", x_range = xr, zero = panel.zero })
  end
end

return Plots
