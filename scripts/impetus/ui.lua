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

-- ui.plot(gfx, x, y, w, h, series [, opts]): a plot in the pixel box (x, y, w, h) from the top left
--   series  { {values = {...}, color = {r, g, b}, label = "kinetic"}, ... }: samples at equal steps, the
--           newest last; every series on one shared y range
--   opts    a title, or {title, x_label, y_label, x_range = {x of the first sample, x of the last},
--           y_range = {lo, hi}, zero = true}; x_range defaults to the sample numbers 1 .. n, y_range to the
--           samples' own (with zero: stretched to include 0)
-- The box is cut into header rows (the title, then the legend: each series' colour and label, on as many
-- rows as it needs), the data area, the y axis's values (top, middle, bottom) and y_label to its left,
-- and the ends of x_range with x_label under it: nothing but the data, its grid and a zero line is drawn
-- over the data.
local function fmt(v)
  if v == 0 then return "0" end
  local a = math.abs(v)
  if a >= 1e4 or a < 1e-2 then return string.format("%.2e", v) end
  return string.format("%.3g", v)
end

function ui.plot(gfx, x, y, w, h, series, opts)
  if type(opts) ~= "table" then opts = { title = opts } end
  local lh = gfx.line_height()
  gfx.rect(x, y, w, h, { 0, 0, 0, 0.55 })
  -- the range of the samples
  local lo, hi, n = math.huge, -math.huge, 0
  for _, s in ipairs(series) do
    for _, v in ipairs(s.values) do
      if v == v and v > -math.huge and v < math.huge then lo, hi = math.min(lo, v), math.max(hi, v) end
    end
    n = math.max(n, #s.values)
  end
  if opts.y_range then lo, hi = opts.y_range[1], opts.y_range[2] end
  if lo > hi then lo, hi = 0, 1 end
  if opts.zero then lo, hi = math.min(lo, 0), math.max(hi, 0) end
  if hi - lo < 1e-12 * math.max(1, math.abs(hi)) then hi, lo = hi + 0.5 * math.max(1e-9, math.abs(hi)), lo - 0.5 * math.max(1e-9, math.abs(lo)) end
  -- the header: title, then the legend, wrapped onto more rows when it does not fit
  local hx, hy = x + 6, y + 3
  if opts.title then
    gfx.text(hx, hy, opts.title, WHITE)
    hx = hx + gfx.text_width(opts.title) + 14
  end
  for _, s in ipairs(series) do
    if s.label then
      local c = s.color or WHITE
      local tw = gfx.text_width(s.label)
      if hx + 14 + tw > x + w - 4 and hx > x + 6 then hx, hy = x + 6, hy + lh end
      gfx.rect(hx, hy + lh / 2 - 4, 10, 8, c)
      gfx.text(hx + 14, hy, s.label, c)
      hx = hx + 14 + tw + 12
    end
  end
  local header = hy + lh + 5 - y
  -- the axes' labels around the data area
  local mid = (lo + hi) / 2
  local ticks = { fmt(hi), fmt(mid), fmt(lo) }
  local left = 0
  for _, t in ipairs(ticks) do left = math.max(left, gfx.text_width(t)) end
  if opts.y_label then left = math.max(left, gfx.text_width(opts.y_label)) end
  local dx, dy = x + left + 12, y + header + (opts.y_label and 1.5 * lh or lh / 2)
  local dw, dh = x + w - 8 - dx, y + h - lh - 8 - dy
  if dw < 8 or dh < 8 then return end
  gfx.rect(dx, dy, dw, dh, { 1, 1, 1, 0.06 })
  if opts.y_label then gfx.text(x + 6, y + header - 2, opts.y_label, DIM) end
  for k, t in ipairs(ticks) do
    local ty = dy + (k - 1) / 2 * dh
    gfx.text(dx - 6 - gfx.text_width(t), ty - lh / 2, t, DIM)
    gfx.rect(dx, ty, dw, 1, { 1, 1, 1, 0.12 })
  end
  if lo < 0 and hi > 0 then gfx.rect(dx, dy + hi / (hi - lo) * dh, dw, 1, { 1, 1, 1, 0.3 }) end
  local xr = opts.x_range or { 1, math.max(n, 1) }
  local x0, x1 = fmt(xr[1]), fmt(xr[2])
  gfx.text(dx, dy + dh + 3, x0, DIM)
  gfx.text(dx + dw - gfx.text_width(x1), dy + dh + 3, x1, DIM)
  if opts.x_label then gfx.text(dx + (dw - gfx.text_width(opts.x_label)) / 2, dy + dh + 3, opts.x_label, DIM) end
  if n < 2 then return end
  -- the data: one line per series, at most a point per pixel column
  for _, s in ipairs(series) do
    local vals = s.values
    local stride = math.max(1, #vals // math.floor(dw))
    local pts = {}
    for i = 1, #vals, stride do
      local v = math.max(lo, math.min(hi, vals[i]))
      if v == v then
        pts[#pts + 1] = dx + (i - 1) / (n - 1) * dw
        pts[#pts + 1] = dy + (hi - v) / (hi - lo) * dh
      end
    end
    if #pts >= 4 then gfx.polyline(pts, { color = s.color or WHITE, width = 1.5 })
    elseif #pts == 2 then gfx.rect(pts[1] - 1, pts[2] - 1, 2, 2, s.color or WHITE) end
  end
end

return ui
