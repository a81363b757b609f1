-- ui: the overlay the run loop draws: HUD, help (F1), script error screen, and a small plot helper
-- scenes may use in draw(world, gfx).
local ui = {}

local WHITE, DIM, KEY = { 1, 1, 1, 1 }, { 0.75, 0.78, 0.82, 1 }, { 1, 0.8, 0.4, 1 }

-- info: {title, time, step_ms, fps (nil when not measured, as offscreen), particles, bodies, paused,
-- warning, behind ({ratio}: the loop could not keep up with real time)}
function ui.hud(gfx, info)
  local stats = string.format("t = %.2f s   step %.2f ms", info.time, info.step_ms or 0)
  if info.fps then stats = stats .. string.format("   %d fps", info.fps) end
  stats = stats .. string.format("   %d particles", info.particles)
  if (info.bodies or 0) > 0 then stats = stats .. string.format("   %d bodies", info.bodies) end
  if info.paused then stats = stats .. "   [paused]" end
  local lines = { info.title, stats, "F1: help" }
  if info.behind then
    lines[#lines + 1] = string.format("behind: simulating at %.2g x real time (catch-up capped)", info.behind.ratio)
  end
  if info.warning then lines[#lines + 1] = info.warning end
  local lh = gfx.line_height()
  local w = 0
  for _, l in ipairs(lines) do w = math.max(w, gfx.text_width(l)) end
  gfx.rect(8, 8, w + 16, lh * #lines + 10, { 0, 0, 0, 0.45 })
  for i, l in ipairs(lines) do gfx.text(16, 12 + (i - 1) * lh, l, i == 1 and WHITE or DIM) end
end

-- the help overlay: the scene's own keys ({{"space", "fire"}, ...}) first, then the viewer's
function ui.help(gfx, own, viewer)
  local lh = gfx.line_height()
  local width, height = gfx.size()
  local rows = {}
  if #own > 0 then
    rows[#rows + 1] = { title = "this scene" }
    for _, k in ipairs(own) do rows[#rows + 1] = k end
    rows[#rows + 1] = { title = "impetus" }
  end
  for _, k in ipairs(viewer) do rows[#rows + 1] = k end
  local col = 0
  for _, k in ipairs(rows) do if k[1] then col = math.max(col, gfx.text_width(k[1])) end end
  col = col + 24
  local w = gfx.text_width("impetus keys")
  for _, k in ipairs(rows) do if k[1] then w = math.max(w, col + gfx.text_width(k[2])) end end
  w = w + 32
  local h = lh * (#rows + 3)
  local x, y = (width - w) / 2, (height - h) / 2
  gfx.rect(x, y, w, h, { 0.05, 0.06, 0.08, 0.85 })
  gfx.text(x + 16, y + 10, #own > 0 and "keys" or "impetus keys", WHITE)
  for i, k in ipairs(rows) do
    local ty = y + 10 + (i + 0.5) * lh
    if k.title then
      gfx.text(x + 16, ty, k.title, WHITE)
    else
      gfx.text(x + 16, ty, k[1], KEY)
      gfx.text(x + 16 + col, ty, k[2], DIM)
    end
  end
end

-- LOVE-style error screen: the message and traceback, and what to do about it
function ui.error_screen(gfx, message)
  local width, height = gfx.size()
  gfx.rect(0, 0, width, height, { 0.25, 0.05, 0.07, 0.96 })
  local lh = gfx.line_height()
  gfx.text(24, 24, "Script error: the simulation is waiting", WHITE)
  local y = 24 + 2 * lh
  for line in (message .. "\n"):gmatch("(.-)\n") do
    line = line:gsub("\t", "    ")
    gfx.text(24, y, line, DIM)
    y = y + lh
    if y > height - 3 * lh then break end
  end
  gfx.text(24, height - 2 * lh, "Fix the file and save it: the scene reloads. R restarts, Esc quits.", { 1, 0.8, 0.4, 1 })
end

-- ui.plot(gfx, x, y, w, h, series): series = { {values = {...}, color = {r,g,b}, label = "..."}, ... }
-- draws every series scaled to one shared range, newest sample on the right
function ui.plot(gfx, x, y, w, h, series, title)
  gfx.rect(x, y, w, h, { 0, 0, 0, 0.5 })
  local lo, hi, n = math.huge, -math.huge, 0
  for _, s in ipairs(series) do
    for _, v in ipairs(s.values) do lo, hi = math.min(lo, v), math.max(hi, v) end
    n = math.max(n, #s.values)
  end
  if n < 2 then return end
  if hi - lo < 1e-12 then hi, lo = hi + 0.5, lo - 0.5 end
  for _, s in ipairs(series) do
    local vals, c = s.values, s.color or WHITE
    local stride = math.max(1, #vals // w)
    for i = 1, #vals, stride do
      local px = x + (i - 1) / (n - 1) * (w - 3)
      local py = y + h - 2 - (vals[i] - lo) / (hi - lo) * (h - 4)
      gfx.rect(px, py - 1, 2, 2, c)
    end
  end
  local lh = gfx.line_height()
  if title then gfx.text(x + 6, y + 4, title, WHITE) end
  gfx.text(x + w - 6 - gfx.text_width(string.format("%.4g", hi)), y + 4, string.format("%.4g", hi), DIM)
  gfx.text(x + w - 6 - gfx.text_width(string.format("%.4g", lo)), y + h - lh - 2, string.format("%.4g", lo), DIM)
  for i, s in ipairs(series) do
    if s.label then gfx.text(x + 6, y + 4 + i * lh, s.label, s.color or WHITE) end
  end
end

return ui
