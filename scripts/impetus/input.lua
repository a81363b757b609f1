-- input: the keyboard and mouse state of a runner, and impetus.input, the polling face scenes use.
--
--   impetus.input.key_down(key)        true while the key is held ("space", "a", "left", "left_shift")
--   impetus.input.mouse_down(button)   true while the button is held (1 left, 2 right, 3 middle, as LOVE)
--   impetus.input.mouse_position()     x, y in window pixels (origin top-left)
--   impetus.input.mouse_world()        the world point under the mouse: on the plane z = 0 with the 2D
--                                      camera; the first hit of the mouse ray with the 3D camera (nil
--                                      when the ray hits nothing)
--   impetus.input.mouse_ray()          origin, unit direction of the ray under the mouse
--   impetus.input.mouse_hit()          the first hit of that ray in the scene's world, as world:raycast
--                                      returns it ({body or collider, shape, point, normal, fraction}), or nil
--   impetus.input.size()               the window's width, height in pixels
--
-- The state belongs to the runner that is running the scene (impetus.runner or the host); events
-- reach it through runner:event(e), from the window or from a spec's scripted input.
local active = require "impetus.active"
local args = require "impetus.args"

local Input = {}
Input.__index = Input

function Input.new(runner, width, height)
  return setmetatable({ runner = runner, keys = {}, buttons = {}, x = 0, y = 0, width = width or 1280,
    height = height or 720 }, Input)
end

-- keep the state in step with an event; called for every event before anyone handles it
function Input:update(e)
  local t = e.type
  if t == "keydown" then self.keys[e.key] = true
  elseif t == "keyup" then self.keys[e.key] = nil
  elseif t == "mousedown" then self.buttons[e.button] = true; self.x, self.y = e.x, e.y
  elseif t == "mouseup" then self.buttons[e.button] = nil; self.x, self.y = e.x, e.y
  elseif t == "mousemove" then self.x, self.y = e.x, e.y
  elseif t == "focuslost" then self.keys, self.buttons = {}, {} -- keys released while away never report
  end
end

function Input:mouse_ray()
  return self.runner.camera:ray(self.x, self.y, self.width, self.height)
end

function Input:mouse_hit()
  local w = self.runner.world
  if not w then return nil end
  local o, d, far = self:mouse_ray()
  local hit = w:raycast(o, { o[1] + d[1] * far, o[2] + d[2] * far, o[3] + d[3] * far })
  return hit
end

function Input:mouse_world()
  local cam = self.runner.camera
  if cam.mode == "2d" then return cam:plane_point(self.x, self.y, self.width, self.height) end
  local hit = self:mouse_hit()
  return hit and hit.point or nil
end

-- ---- impetus.input: the scene's view of the current runner's input ------------------------------------
local api = {}
Input.api = api

local function current(fn)
  local r = active.runner
  if not r then
    error("impetus.input." .. fn .. ": no scene is running (input belongs to a runner: the host or impetus.runner)", 3)
  end
  return r.input
end

function api.key_down(key, ...)
  args.at_most("impetus.input.key_down(key)", 1, key, ...)
  if type(key) ~= "string" then error("impetus.input.key_down: argument 'key' must be a key name such as \"space\"", 2) end
  return current("key_down").keys[key] == true
end

function api.mouse_down(button, ...)
  args.at_most("impetus.input.mouse_down([button])", 1, button, ...)
  button = button or 1
  if math.type(button) ~= "integer" or button < 1 then
    error("impetus.input.mouse_down: argument 'button' must be 1 (left), 2 (right), 3 (middle), ...", 2)
  end
  return current("mouse_down").buttons[button] == true
end

function api.mouse_position(...)
  args.at_most("impetus.input.mouse_position()", 0, ...)
  local i = current("mouse_position")
  return i.x, i.y
end

function api.mouse_world(...)
  args.at_most("impetus.input.mouse_world()", 0, ...)
  return current("mouse_world"):mouse_world()
end

function api.mouse_ray(...)
  args.at_most("impetus.input.mouse_ray()", 0, ...)
  return current("mouse_ray"):mouse_ray()
end

function api.mouse_hit(...)
  args.at_most("impetus.input.mouse_hit()", 0, ...)
  return current("mouse_hit"):mouse_hit()
end

function api.size(...)
  args.at_most("impetus.input.size()", 0, ...)
  local i = current("size")
  return i.width, i.height
end

return Input
