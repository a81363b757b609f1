-- impetus: the Lua face of the engine. `local impetus = require "impetus"` works the same in the
-- host, in a plain lua5.4 with the core module on package.cpath, and in the specs.
local core = require "impetus.core"

local impetus = {
  core = core,
  lcp = core.lcp,          -- impetus.lcp.solve(A, b [, neq]): the pivoting LCP solver
  ode = core.ode,          -- impetus.ode.step / solve / adapt_factor / order
  quat = core.quat,        -- impetus.quat.from_axis_angle / to_matrix / from_matrix / mul / rotate
  version = core.version,
}

-- impetus.world{gravity = {0, -9.81, 0}, drag = 0, integrator = "rk4", tolerance = 1e-6}
function impetus.world(...) return core.world(...) end

-- impetus.load_snapshot(path): a Snapshot saved by snapshot:save(path) (world:snapshot() makes one)
impetus.load_snapshot = core.load_snapshot
impetus.decode_snapshot = core.decode_snapshot -- from snapshot:encode()

-- impetus.random: the seeded generator scenes draw from, so rewound and replayed runs draw the same
impetus.random = require "impetus.random"

-- impetus.runner(path, opts): a scene with its world, stepping and hot reload, without a window
function impetus.runner(path, opts) return require("impetus.runner").new(path, opts) end

-- impetus.on_contact(body, fn(self, other, e)): per-body contact callbacks after each step (contacts.lua)
local contacts = require "impetus.contacts"
impetus.on_contact = contacts.on_contact
impetus.dispatch_contacts = contacts.dispatch

-- input polling, the camera and sound of the running scene (input.lua, camera.lua, sound.lua)
impetus.input = require("impetus.input").api
impetus.camera = require("impetus.camera").api
impetus.sound = require "impetus.sound"

local active = require "impetus.active"

-- impetus.restart(): a fresh world and setup, as the R key, once the current callback returns
function impetus.restart(...)
  require("impetus.args").at_most("impetus.restart()", 0, ...)
  local r = active.runner
  if not r then error("impetus.restart: no scene is running", 2) end
  r.restart_requested = true
end

-- impetus.quit(): close the window (or end a headless run) after the current frame
function impetus.quit(...)
  require("impetus.args").at_most("impetus.quit()", 0, ...)
  local r = active.runner
  if not r then error("impetus.quit: no scene is running", 2) end
  r.quit_requested = true
end

return impetus
