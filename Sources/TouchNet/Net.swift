import TouchCore
