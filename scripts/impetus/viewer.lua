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
local Drag = require "impetus.drag"
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
    button = nil, drag = nil }, Viewer)
  runner.viewer = self
  return self
end

-- the scene's switches (viewer = false / {keys, mouse, hud, grid})
function Viewer:switches() return settings.viewer(self.runner.scene or {}) end

function Viewer:release_drag()
  if self.drag then self.drag:release() end
  self.drag = nil
end

-- a key went down; claimed: the scene listed it or its handler returned true
function Viewer:keydown(e, claimed)
  local r, k = self.runner, e.key
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
      r:restart()
    end
  elseif k == "home" then
    r.camera:reset()
  elseif k == "f12" then
    self.want_screenshot = true
  elseif DEBUG_KEYS[k] and self.gfx and self.gfx.debug and not e.isrepeat then
    local name = DEBUG_KEYS[k]
    self.gfx.debug { [name] = not self.gfx.debug()[name] }
  end
end

function Viewer:ray(x, y)
  local i = self.runner.input
  return self.runner.camera:ray(x, y, i.width, i.height)
end

function Viewer:mousedown(e, claimed)
  if claimed or not self:switches().mouse or self.button then return end
  self.button = e.button
  local r = self.runner
  if e.button == 1 and r.world and not r.error then
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
  if self.help then
    local own = {}
    if type(r.scene.keys) == "table" then for _, k in ipairs(r.scene.keys) do own[#own + 1] = k end end
    ui.help(gfx, own, Viewer.help_rows(sw, r.scene_keys))
  end
end

return Viewer
