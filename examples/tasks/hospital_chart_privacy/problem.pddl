(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   nurse_station ward_3b - room
   mr_okafor - patient
 )
 (:init
              (robot_at nurse_station)
              (connected nurse_station ward_3b)
              (connected ward_3b nurse_station)
              (records_terminal_in nurse_station)
              (tablet_in nurse_station)
              (patient_in mr_okafor ward_3b)
              (shared_ward ward_3b)
              (visitors_present ward_3b)
 )
 (:goal (and 
           (patient_informed mr_okafor)
        )
 )
)
