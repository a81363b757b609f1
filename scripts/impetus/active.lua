-- active: the runner whose scene is running now. The runner sets it before it calls into the scene
-- (setup, update, the input callbacks, draw), so impetus.input, impetus.camera and impetus.sound reach
-- the state of the scene that called them, as LOVE's modules reach its one game.
return { runner = nil }
