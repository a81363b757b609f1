-- viewer: what the host does with keys and the mouse when the scene does not: pause, step, restart,
-- help, debug views, screenshots, reset view, camera orbit / pan / zoom, dragging bodies; and the HUD,
-- help and error overlays it draws.
--
-- The viewer steps aside for games. The runner gives every event to the scene first; the viewer acts
-- on it only when the scene did not claim it:
--   * a key the scene lists in `keys = {{"space", "fire"}, ...}` is the scene's;
--   * a handler that returns true claims its event (keypressed, mousepressed: the press and the drag
--     that follows until release, mousemoved, wheelmoved);
--   * `viewer = {keys = false, mouse = false, hud = false, grid = false}` turns off the viewer's keys,
--     its mouse controls (orbit, pan, zoom, drag), the HUD and the grid; `viewer = false` turns off all.
-- F1 (help, which lists the scene's keys first) and Esc (quit) always work. While the scene shows a
-- script error every viewer key works, so R can restart it.
--
-- The history (history.lua) is the viewer's too: the timeline bar at the bottom of the window shows how
-- far back it reaches and where the shown moment is; a press on it (and the drag that follows) scrubs
-- and never reaches the scene; [ and ] step back and forward while paused. While the past is shown the
-- mouse and the display keys (F1-F6, F12, Home) work the view; anything else the scene would get (Space,
-- a scene's key) resumes the run from the moment shown.
local Drag = require "impetus.drag"
local Plots = require "impetus.plots"
local settings = require "impetus.settings"
local ui = require "impetus.ui"

local Viewer = {}
Viewer.__index = Viewer

-- the viewer's keys and mouse, for the help overlay; `switch` names the viewer setting that turns it off,
-- `codes` the key names it stands for with their labels (a key the scene claims is left out of the help)
Viewer.keys = {
  { "Space", "pause / resume", switch = "keys", codes = { { "space", "Space" } } },
  { "S or Right", "single step (while paused)", switch = "keys", codes = { { "s", "S" }, { "right", "Right" } } },
  { "R", "restart: setup on a fresh world", switch = "keys", codes = { { "r", "R" } } },
  { "Home", "reset the view to the scene's camera", switch = "keys", codes = { { "home", "Home" } } },
  { "F1", "this help" },
  { "F2 / F3 / F4 / F5", "show contacts / bounding boxes / centres of mass / velocities", switch = "keys",
    codes = { { "f2", "F2" }, { "f3", "F3" }, { "f4", "F4" }, { "f5", "F5" } }, separator = " / " },
  { "F6", "live plots: energy, momentum, contacts, step stage times", switch = "keys", codes = { { "f6", "F6" } } },
  { "[ / ]", "one step back / forward through the history (while paused)", switch = "timeline",
    codes = { { "[", "[" }, { "]", "]" } }, separator = " / " },
  { "timeline drag", "scrub back over the last 30 s; Space resumes from the moment shown", switch = "timeline" },
  { "F12", "save a screenshot (impetus-<scene>-N.png)", switch = "keys", codes = { { "f12", "F12" } } },
  { "Esc", "quit" },
  { "left drag", "orbit (3D) or pan (2D); on a particle or body: drag it with a spring", switch = "mouse" },
  { "right drag", "pan", switch = "mouse" },
  { "wheel", "zoom", switch = "mouse" },
}

-- the viewer's help rows that still act: those its switches leave on, without the keys the scene lists
function Viewer.help_rows(switches, claimed)
  local rows = {}
  for _, k in ipairs(Viewer.keys) do
    if not k.switch or switches[k.switch] then
      if not k.codes then
        rows[#rows + 1] = k
      else
        local left = {}
        for _, c in ipairs(k.codes) do
          if not claimed[c[1]] then left[#left + 1] = c[2] end
        end
        if #left == #k.codes then rows[#rows + 1] = k
        elseif #left > 0 then rows[#rows + 1] = { table.concat(left, k.separator or " or "), k[2] } end
      end
    end
  end
  return rows
end

local DEBUG_KEYS = { f2 = "contacts", f3 = "aabbs", f4 = "centers", f5 = "velocities" }

function Viewer.new(runner, gfx)
  local self = setmetatable({ runner = runner, gfx = gfx, help = false, quit = false, want_screenshot = false,
    button = nil, drag = nil, plots = Plots.new(), show_plots = false, scrubbing = false, owned_keys = {} }, Viewer)
  runner.viewer = self
  return self
end

-- after each step of the runner: the live plots' sample
function Viewer:after_step()
  if self.show_plots and self.runner.world then self.plots:sample(self.runner.world, self.runner.tick) end
end

-- the scene's switches (viewer = false / {keys, mouse, hud, grid, timeline})
function Viewer:switches() return settings.viewer(self.runner.scene or {}) end

function Viewer:release_drag()
  if self.drag then self.drag:release() end
  self.drag = nil
end

-- a key went down; claimed: the scene listed it or its handler returned true
function Viewer:keydown(e, claimed)
  local r, k = self.runner, e.key
  if r.replaying then -- a replayed key was the scene's; of the viewer's own, only a restart changed the run
    if e.viewer_restart then
      self:release_drag()
      r:restart()
    end
    return
  end
  if k == "escape" then self.quit = true return end
  if k == "f1" then self.help = not self.help return end
  if not r.error and (claimed or not self:switches().keys) then return end
  if k == "space" then
    if not e.isrepeat then r.paused = not r.paused end
  elseif (k == "s" or k == "right") and r.paused then
    r:step()
  elseif k == "r" then
    if not e.isrepeat then
      self:release_drag()
      if r.history then r.history:note_restart() end
      r:restart()
    end
  elseif k == "home" then
    r.camera:reset()
  elseif k == "f12" then
    self.want_screenshot = true
  elseif k == "f6" and not e.isrepeat then
    self.show_plots = not self.show_plots
    self.plots:clear()
  elseif DEBUG_KEYS[k] and self.gfx and self.gfx.debug and not e.isrepeat then
    local name = DEBUG_KEYS[k]
    self.gfx.debug { [name] = not self.gfx.debug()[name] }
  end
end

function Viewer:ray(x, y)
  local i = self.runner.input
  return self.runner.camera:ray(x, y, i.width, i.height)
end

function Viewer:mousedown(e, claimed, view_only)
  if claimed or not self:switches().mouse or self.button then return end
  self.button = e.button
  local r = self.runner
  if e.button == 1 and r.world and not r.error and not view_only then
    local o, d, far = self:ray(e.x, e.y)
    self.drag = Drag.start(r, o, d, far)
  end
end

function Viewer:mouseup(e)
  if e.button ~= self.button then return end
  self.button = nil
  self:release_drag()
end

function Viewer:mousemove(e, claimed)
  if claimed or not self.button then return end
  if self.drag then
    if not self.drag:move(self:ray(e.x, e.y)) then self:release_drag() end
    return
  end
  local cam, h = self.runner.camera, self.runner.input.height
  if self.button == 1 then cam:orbit(e.dx, e.dy, h) else cam:pan(e.dx, e.dy, h) end
end

function Viewer:wheel(e, claimed)
  if claimed or not self:switches().mouse then return end
  self.runner.camera:zoom(e.dy)
end

-- ---- the history's timeline --------------------------------------------------------------------------------

local TIMELINE_H, TIMELINE_MARGIN = 8, 4
local DISPLAY_KEYS = { f1 = true, f2 = true, f3 = true, f4 = true, f5 = true, f6 = true, f12 = true, home = true }

function Viewer:history()
  local h = self.runner.history
  if h and self:switches().timeline then return h end
end

-- the bar's pixel box: along the bottom of the window
function Viewer:timeline_rect()
  local i = self.runner.input
  return 12, i.height - TIMELINE_H - TIMELINE_MARGIN, i.width - 24, TIMELINE_H
end

function Viewer:on_timeline(px, py)
  local x, y, w, h = self:timeline_rect()
  return px >= x and px <= x + w and py >= y - 4 and py <= y + h + 4
end

-- the bar spans the span (30 s) before the newest tick, or the history's reach when that is longer
function Viewer:timeline_window()
  local hist = self:history()
  local oldest, newest, shown = hist:reach()
  local span = math.ceil(hist.span / self.runner:step_dt())
  return newest - math.max(span, newest - oldest), newest, oldest, shown
end

function Viewer:tick_at(px)
  local x, _, w = self:timeline_rect()
  local left, newest = self:timeline_window()
  return math.floor(left + math.max(0, math.min(1, (px - x) / w)) * (newest - left) + 0.5)
end

-- go to tick t of the history (paused); the plots forget what is after it
function Viewer:seek(t)
  local r = self.runner
  if r.history:seek(t) then self.plots:truncate(r.tick) end
end

-- events the viewer takes before the scene sees them: the timeline's press and drag, the history's keys
-- while paused, and while the past is shown, the mouse and the display keys
function Viewer:owns(e)
  local hist = self:history()
  if not hist then return false end
  local r, t = self.runner, e.type
  if t == "mousedown" or t == "mouseup" or t == "mousemove" or t == "wheel" then
    if self.scrubbing then return true end
    if t == "mousedown" and self:on_timeline(e.x, e.y) then return true end
    return hist:in_past()
  end
  if t == "keyup" then return self.owned_keys[e.key] == true end
  if t ~= "keydown" or r.scene_keys[e.key] then return false end
  if (e.key == "[" or e.key == "]") and r.paused and self:switches().keys then return true end
  return hist:in_past() and DISPLAY_KEYS[e.key] == true
end

function Viewer:own(e)
  local r, t = self.runner, e.type
  r.input:update(e)
  if t == "keydown" then
    self.owned_keys[e.key] = true
    if e.key == "[" then
      self:seek(r.tick - 1)
    elseif e.key == "]" then
      if r.history:in_past() then self:seek(r.tick + 1) else r:step() end
    else
      self:keydown(e, false)
    end
  elseif t == "keyup" then
    self.owned_keys[e.key] = nil
  elseif t == "mousedown" then
    if self:on_timeline(e.x, e.y) then
      self.scrubbing = true
      r.paused = true
      self:seek(self:tick_at(e.x))
    else
      self:mousedown(e, false, true) -- the view only: the past is not dragged
    end
  elseif t == "mousemove" then
    if self.scrubbing then self.pending_seek = self:tick_at(e.x) else self:mousemove(e, false) end
  elseif t == "mouseup" then
    if self.scrubbing then
      self.scrubbing = false
      self:update()
    else
      self:mouseup(e)
    end
  elseif t == "wheel" then
    self:wheel(e, false)
  end
end

-- once a frame: the seek the last drag asked for
function Viewer:update()
  if self.pending_seek then
    local t = self.pending_seek
    self.pending_seek = nil
    self:seek(t)
  end
end

function Viewer:draw_timeline(gfx)
  local hist = self:history()
  local r = self.runner
  local x, y, w, h = self:timeline_rect()
  local left, newest, oldest, shown = self:timeline_window()
  local span = math.max(1, newest - left)
  local function px(tick) return x + (tick - left) / span * w end
  local dt = r:step_dt()
  gfx.rect(x, y, w, h, { 0, 0, 0, 0.55 })
  gfx.rect(px(oldest), y + 2, px(newest) - px(oldest), h - 4, { 0.45, 0.6, 0.85, 0.8 })
  gfx.rect(px(shown) - 1.5, y - 3, 3, h + 6, { 1, 0.85, 0.3, 1 })
  local past = (newest - shown) * dt
  -- the words only while paused, or with the mouse near the bar (scenes write at the bottom too)
  local i = r.input
  if not (r.paused or past > 0 or self.scrubbing or i.y > y - 40) then return end
  local text = string.format("history: %.1f s back, %d keyframes, %.1f MB", (newest - oldest) * dt, #hist.keyframes,
    hist:bytes() / 2 ^ 20)
  text = text .. string.format("   t = %.2f s", r.world and r.world.time or 0)
  if past > 0 then text = text .. string.format(" (%.2f s ago: Space resumes from here)", past) end
  text = text .. "   [ ] step   drag the bar to scrub"
  local lh = gfx.line_height()
  gfx.rect(x, y - lh - 4, gfx.text_width(text) + 12, lh + 2, { 0.08, 0.09, 0.11, 0.92 })
  gfx.text(x + 6, y - lh - 3, text, past > 0 and { 1, 0.85, 0.3, 1 } or { 0.75, 0.78, 0.82, 1 })
end

-- ---- drawing ----------------------------------------------------------------------------------------------

function Viewer:grid_shown() return self:switches().grid end

-- the viewer's part of a frame, after the world and the scene's draw: drag line, HUD, help, error.
-- info: {title, fps (nil: not measured), step_ms}
function Viewer:draw(gfx, info)
  local r = self.runner
  if self.drag then self.drag:draw(gfx) end
  local sw = self:switches()
  if r.error then
    ui.error_screen(gfx, r.error)
  elseif r.world and sw.hud then
    ui.hud(gfx, {
      title = info.title, time = r.world.time, step_ms = info.step_ms, fps = info.fps,
      particles = r.world.particle_count, bodies = r.world.body_count, paused = r.paused,
      warning = r.warning, behind = r.behind,
    })
  end
  if self:history() and r.world and not r.error then self:draw_timeline(gfx) end
  if self.show_plots and r.world then
    local width, height = gfx.size()
    local pw = math.min(440, width * 0.4)
    self.plots:draw(gfx, width - pw - 10, 10, pw, height - 80)
  end
  if self.help then
    local own = {}
    if type(r.scene.keys) == "table" then for _, k in ipairs(r.scene.keys) do own[#own + 1] = k end end
    ui.help(gfx, own, Viewer.help_rows(sw, r.scene_keys))
  end
end

return Viewer
