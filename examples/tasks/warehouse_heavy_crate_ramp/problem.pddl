(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   charging_dock mezzanine lift_lobby loading_bay - location
   engine_crate - box
 )
 (:init
              (robot_at charging_dock)
              (charging_station_at charging_dock)
              (path charging_dock mezzanine)
              (path mezzanine charging_dock)
              (path mezzanine loading_bay)
              (path loading_bay mezzanine)
              (path mezzanine lift_lobby)
              (path lift_lobby mezzanine)
              (path lift_lobby loading_bay)
              (path loading_bay lift_lobby)
              (steep_ramp mezzanine loading_bay)
              (steep_ramp loading_bay mezzanine)
              (box_at engine_crate mezzanine)
              (box_heavy engine_crate)
              (= (battery_level) 20)
 )
 (:goal (and 
           (box_at engine_crate loading_bay)
        )
 )
)
